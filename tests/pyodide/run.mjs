// Run a Python program under Pyodide in Node, offline (issue 25 §1).
//
//   node tests/pyodide/run.mjs PROGRAM.py [WHEEL.whl ...] [--host DIR] [--pyodide DIR]
//
// Pyodide is loaded from the local npm folder (.cache/pyodide/node_modules/pyodide, made by
// .ci/install-pyodide.sh, or --pyodide DIR); every wheel named is unpacked into
// site-packages with Python's zipfile (no micropip, no package index). DIR (--host) is
// mounted at /host, for the program's input and output files. Any fetch is refused, so a
// run that would reach the network fails instead. The program's last expression is not
// used: it sets RESULT (any JSON-able value), which is printed as one JSON line after
// the line "=== RESULT ===". Timings (ms) go to stderr as JSON: load, wheels, program.
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
let pyodideDir = path.resolve(here, "../../.cache/pyodide/node_modules/pyodide");
let hostDir = null;
const rest = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--pyodide") pyodideDir = path.resolve(args[++i]);
  else if (args[i] === "--host") hostDir = path.resolve(args[++i]);
  else rest.push(args[i]);
}
const [program, ...wheels] = rest;
if (!program) {
  console.error("usage: node run.mjs PROGRAM.py [WHEEL.whl ...] [--host DIR] [--pyodide DIR]");
  process.exit(2);
}

globalThis.fetch = async (url) => {
  throw new Error(`network access refused (offline test): ${url}`);
};

const t0 = performance.now();
const { loadPyodide } = await import(path.join(pyodideDir, "pyodide.mjs"));
const pyodide = await loadPyodide({
  indexURL: pyodideDir + path.sep,
  lockFileURL: path.join(pyodideDir, "pyodide-lock.json"),
  packageCacheDir: pyodideDir,
  stdout: (line) => process.stderr.write(line + "\n"),
  stderr: (line) => process.stderr.write(line + "\n"),
});
const t1 = performance.now();

pyodide.FS.mkdirTree("/wheels");
const names = [];
for (const wheel of wheels) {
  const name = path.basename(wheel);
  pyodide.FS.writeFile(`/wheels/${name}`, readFileSync(wheel));
  names.push(name);
}
pyodide.globals.set("_WHEELS", pyodide.toPy(names));
pyodide.runPython(`
import sysconfig, zipfile
_site = sysconfig.get_paths()["purelib"]
for _name in _WHEELS:
    with zipfile.ZipFile("/wheels/" + _name) as _whl:
        _whl.extractall(_site)
import importlib
importlib.invalidate_caches()
del _name, _whl, _site, _WHEELS
`);
if (hostDir) {
  pyodide.FS.mkdirTree("/host");
  pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: hostDir }, "/host");
}
const t2 = performance.now();

pyodide.runPython(readFileSync(program, "utf8"), { filename: program });
const t3 = performance.now();
const result = pyodide.runPython("import json as _json; _json.dumps(RESULT)");
process.stderr.write(JSON.stringify({ load_ms: t1 - t0, wheels_ms: t2 - t1, program_ms: t3 - t2 }) + "\n");
process.stdout.write("=== RESULT ===\n" + result + "\n");
