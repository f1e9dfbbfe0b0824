/* sheetsync's Python, off the page's thread: loads Pyodide from the URL in config.json,
   unpacks the wheels into site-packages with Python's zipfile, then runs the calls the page
   sends to sheetsync.app.browser.  Messages in: {kind: "init", config} and
   {kind: "call", id, fn, args, data}; out: {kind: "loading", text, done, total},
   {kind: "ready", systems}, {kind: "failed", message}, {kind: "progress", id, detail} and
   {kind: "answer", id, result}. */
"use strict";

const SHIM = `
import io, json, sysconfig, traceback, zipfile


def _sheetsync_install(data):
    with zipfile.ZipFile(io.BytesIO(data.to_bytes())) as archive:
        archive.extractall(sysconfig.get_paths()["purelib"])


def _sheetsync_split(value, blobs):
    if isinstance(value, (bytes, bytearray, memoryview)):
        blobs.append(bytes(value))
        return {"$blob": len(blobs) - 1}
    if isinstance(value, dict):
        return {str(k): _sheetsync_split(v, blobs) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_sheetsync_split(v, blobs) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def _sheetsync_call(fn, args_json, data, progress):
    from sheetsync.app import browser
    from sheetsync.core.errors import SheetSyncError

    args = json.loads(args_json)
    positional = list(args.get("args", []))
    keywords = dict(args.get("kwargs", {}))
    if data is not None:
        positional.insert(0, data.to_bytes())
    if fn == "run_step" and progress is not None:
        keywords["progress"] = lambda *a, **k: progress(json.dumps({"args": a, "kwargs": k}, default=str))
    try:
        result = getattr(browser, fn)(*positional, **keywords)
    except SheetSyncError as exc:
        result = {"ok": False, "message": str(exc), "problems": [
            {"cell": getattr(p, "where", None) or getattr(p, "cell", None), "message": getattr(p, "message", str(p))}
            for p in getattr(exc, "problems", None) or []]}
    except Exception as exc:
        result = {"ok": False, "message": f"sheetsync failed: {type(exc).__name__}: {exc}",
                  "trace": traceback.format_exc()}
    blobs = []
    return json.dumps(_sheetsync_split(result, blobs)), blobs
`;

let pyodide = null;
let call = null;

function loading(text, done, total) {
  self.postMessage({ kind: "loading", text, done, total });
}

function joined(base, path) {
  return new URL(path, base).href;
}

function withBlobs(value, blobs) {
  if (Array.isArray(value)) return value.map((v) => withBlobs(v, blobs));
  if (value && typeof value === "object") {
    if (Object.keys(value).length === 1 && typeof value.$blob === "number") return blobs[value.$blob];
    const out = {};
    for (const [k, v] of Object.entries(value)) out[k] = withBlobs(v, blobs);
    return out;
  }
  return value;
}

function runCall(id, fn, args, data) {
  const progress = (detail) => self.postMessage({ kind: "progress", id, detail: JSON.parse(detail) });
  const answer = call(fn, JSON.stringify(args || {}), data || null, progress);
  try {
    const [text, blobProxy] = answer.toJs();
    const blobs = Array.from(blobProxy, (b) => (b instanceof Uint8Array ? b : new Uint8Array(b)));
    return withBlobs(JSON.parse(text), blobs);
  } finally {
    answer.destroy();
  }
}

async function init(config, pageURL) {
  const indexURL = joined(pageURL, config.pyodide);
  const wheels = config.wheels || [];
  const total = wheels.length + 4;
  loading("Loading Python (Pyodide)…", 0, total);
  importScripts(indexURL + "pyodide.js");
  pyodide = await loadPyodide({ indexURL });
  loading("Unpacking sheetsync…", 1, total);
  pyodide.runPython(SHIM);
  const install = pyodide.globals.get("_sheetsync_install");
  for (let i = 0; i < wheels.length; i++) {
    const url = joined(pageURL, wheels[i]);
    const response = await fetch(url);
    if (!response.ok) throw new Error(`can't fetch ${wheels[i]}: HTTP ${response.status}`);
    install(new Uint8Array(await response.arrayBuffer()));
    loading(`Unpacked ${wheels[i].split("/").pop()}`, 2 + i, total);
  }
  install.destroy();
  // Pyodide's own optional packages the config names: loaded now, so the page
  // needs no network once it is ready; a Pyodide without them still runs every step
  for (const name of config.packages || []) {
    loading(`Loading ${name}…`, total - 1, total);
    try {
      await pyodide.loadPackage(name, { messageCallback: () => {}, errorCallback: () => {} });
    } catch (error) {
      // reported below: the package is simply not there
    }
  }
  call = pyodide.globals.get("_sheetsync_call");
  pyodide.runPython("import sheetsync.app.browser");
  const systems = runCall(0, "systems", {}, null);
  loading("Ready", total, total);
  self.postMessage({ kind: "ready", systems, pyodide: indexURL });
}

self.onmessage = async (event) => {
  const message = event.data;
  if (message.kind === "init") {
    try {
      await init(message.config, message.pageURL);
    } catch (error) {
      self.postMessage({ kind: "failed", message: String(error && error.message ? error.message : error) });
    }
    return;
  }
  if (message.kind === "call") {
    let result;
    try {
      result = runCall(message.id, message.fn, message.args, message.data);
    } catch (error) {
      result = { ok: false, message: `sheetsync failed: ${error && error.message ? error.message : error}` };
    }
    const transfer = [];
    for (const value of Object.values(result || {})) {
      if (value instanceof Uint8Array) transfer.push(value.buffer);
    }
    self.postMessage({ kind: "answer", id: message.id, result }, transfer);
  }
};
