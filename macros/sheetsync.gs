/**
 * The battle buttons of a sheetsync Google Sheet, for every rule system sheetsync runs.
 *
 * Each function posts the sheet to the sheetsync HTTP endpoint with xlwings'
 * runPython(url, {auth, apiKey, include, exclude, headers}) and applies the actions that
 * come back.  runPython lives in xlwings.js, which must be in the same Apps Script
 * project: get it with `xlwings copy gs` (the version must match the server's xlwings).
 *
 * Script properties (Project Settings > Script properties):
 *   SHEETSYNC_URL      base URL of the endpoint, reachable from Google's servers
 *                      (https://...); the buttons post to <base>/build, <base>/resolve,
 *                      <base>/undo and <base>/end.  Required: without it (or with an
 *                      address on your own computer) a click says what to set.
 *   SHEETSYNC_API_KEY  sent as the Authorization header; when empty, runPython uses the
 *                      AUTH entry of the xlwings.conf sheet, if any
 *
 * Assign the functions to drawings (Assign script: buildCohorts, ... on a battalion
 * tracker; buildUnits, resolveTurn, ... on a hex tracker) or use the "Sheetsync" menu that
 * onOpen adds.  The menu is the tracker's own: onOpen reads the mark sheetsync keeps in the
 * hidden State sheet (State!B1, e.g. "hexwar@1"; empty on a battalion tracker made before
 * the mark) and shows that system's steps with its captions (SHEETSYNC_STEPS, the same as
 * the steps of each system in sheetsync/rules/<id>/system.py).  Every function posts to one
 * of the same four routes; the endpoint reads the mark too and runs the system's step.
 *
 * One step at a time: each button holds the spreadsheet's document lock from reading the
 * sheet, through the endpoint's answer, to its last change applied, so two clicks on one
 * Google Sheet (by two Trackers, or a double click) run one after the other: the second
 * reads what the first wrote.  A click that can't get the lock within
 * SHEETSYNC_LOCK_WAIT_MS says so and changes nothing.
 */

const SHEETSYNC_LOCK_WAIT_MS = 60000;  // a resolve takes a few seconds; wait for a busy one
const SHEETSYNC_URL_EXAMPLE = "https://sheetsync.example.org/api";

function sheetsyncAlert_(text) {
  const ui = SpreadsheetApp.getUi();
  ui.alert("sheetsync", text, ui.ButtonSet.OK);
}

// What to set SHEETSYNC_URL to, said the same way by every alert that names it.
const SHEETSYNC_URL_HOWTO =
  "In Extensions > Apps Script > Project Settings > Script properties, set SHEETSYNC_URL to " +
  "the public https address of a server running `sheetsync serve` (for example " +
  SHEETSYNC_URL_EXAMPLE + ").";

// The endpoint's base URL from the script properties, or null once an alert has said what
// to set instead.  There is no fallback: Google's servers, not your computer, make the
// request, so they can reach neither 127.0.0.1 nor localhost.
function sheetsyncBase_(props) {
  const raw = String(props.getProperty("SHEETSYNC_URL") || "").trim();
  if (raw === "") {
    sheetsyncAlert_("SHEETSYNC_URL is not set, so the buttons don't know where sheetsync runs. " +
                    SHEETSYNC_URL_HOWTO + " Nothing was changed.");
    return null;
  }
  if (!/^https?:\/\/[^\/\s]+/i.test(raw)) {
    sheetsyncAlert_("SHEETSYNC_URL is \"" + raw + "\", not a web address. " + SHEETSYNC_URL_HOWTO +
                    " Nothing was changed.");
    return null;
  }
  if (/^https?:\/\/(localhost|127\.[0-9.]+|0\.0\.0\.0|\[::1?\])(:[0-9]+)?(\/|$)/i.test(raw)) {
    sheetsyncAlert_("SHEETSYNC_URL is \"" + raw + "\", an address on your own computer, which Google's " +
                    "servers can't reach. " + SHEETSYNC_URL_HOWTO + " Nothing was changed.");
    return null;
  }
  return raw.replace(/\/+$/, "");
}

function sheetsyncShort_(text) {
  const flat = String(text).replace(/\s+/g, " ").trim();
  return flat.length > 300 ? flat.slice(0, 300) + "..." : flat;
}

// A failed click in sheetsync's words, from what runPython (xlwings.js) threw:
// * the text of an answer that was not 200 (runPython throws it as a plain string): the
//   server's {"detail": ...}, say a wrong API key (401) or another xlwings version (400);
// * an Error from UrlFetchApp: the server could not be reached;
// * a SyntaxError: the answer was not JSON, so not sheetsync's;
// * any other Error: one of the answer's changes could not be applied.
function sheetsyncProblem_(error, url) {
  if (typeof error === "string") {
    let detail = error;
    try {
      const body = JSON.parse(error);
      if (body !== null && typeof body.detail === "string") detail = body.detail;
    } catch (e) {
      // not JSON: a proxy's page, shown shortened as it is
    }
    if (/API key/i.test(detail)) {
      return "The server refused the API key: check SHEETSYNC_API_KEY in the script properties " +
             "(Project Settings > Script properties); it must be the SHEETSYNC_API_KEY the server " +
             "was started with. Nothing was changed.";
    }
    if (/xlwings/i.test(detail) && /version/i.test(detail)) {
      return "This spreadsheet's xlwings script (xlwings.js) and the server's xlwings are not the " +
             "same version, so the server refused the step: " + sheetsyncShort_(detail) +
             " Nothing was changed.";
    }
    return "The server at " + url + " refused the step: " + sheetsyncShort_(detail) + " Nothing was changed.";
  }
  const name = error !== null && typeof error === "object" ? String(error.name || "") : "";
  const message = error !== null && typeof error === "object" && "message" in error
    ? String(error.message) : String(error);
  if (name === "ReferenceError" && /runPython/.test(message)) {
    return "xlwings.js is missing from this script project: add it with `xlwings copy gs` " +
           "(the version of the server's xlwings). Nothing was changed.";
  }
  if (message.indexOf(url) !== -1 ||
      /Address unavailable|DNS error|Timeout|timed out|SSL|Unexpected error|Bad request|unreachable|connect/i
        .test(message)) {
    return "The server at " + url + " couldn't be reached (" + sheetsyncShort_(message) + "). Check that " +
           "`sheetsync serve` is running there and that SHEETSYNC_URL in the script properties is its " +
           "public https address. Nothing was changed.";
  }
  if (name === "SyntaxError") {
    return "The server at " + url + " did not answer as sheetsync does (" + sheetsyncShort_(message) +
           "): is SHEETSYNC_URL the address of `sheetsync serve`? Nothing was changed.";
  }
  return "The step's changes could not all be applied to this spreadsheet (" + sheetsyncShort_(message) +
         "). The battle itself is kept in the State sheet, which is written last; the next " +
         "step checks for a half-applied one and repairs or reports it.";
}

// One click: the lock, the request, its changes, and, when anything fails, one alert in
// sheetsync's words.  A step that succeeds is confirmed by the server's own answer (its
// last action, a short alert, as on the desktop buttons).  Alerts come after the lock is
// released: an alert waits for its OK, and a waiting alert must not hold up other clicks.
function sheetsyncCall_(action) {
  const props = PropertiesService.getScriptProperties();
  const base = sheetsyncBase_(props);
  if (base === null) {
    return;
  }
  const url = base + "/" + action;
  const apiKey = props.getProperty("SHEETSYNC_API_KEY") || "";
  const lock = LockService.getDocumentLock();
  if (lock === null) {
    throw new Error("sheetsync: these buttons must be in the spreadsheet's own script " +
                    "(Extensions > Apps Script), not in a standalone project.");
  }
  try {
    lock.waitLock(SHEETSYNC_LOCK_WAIT_MS);
  } catch (e) {
    sheetsyncAlert_(
      "Another sheetsync step is still running on this spreadsheet (" +
        SHEETSYNC_LOCK_WAIT_MS / 1000 + " s and counting). Nothing was changed: " +
        "wait until it has finished, then click again."
    );
    return;
  }
  let problem = null;
  try {
    runPython(url, { auth: apiKey });
    SpreadsheetApp.flush();  // every change applied before the next step may read
  } catch (e) {
    problem = sheetsyncProblem_(e, url);
  } finally {
    lock.releaseLock();
  }
  if (problem !== null) {
    sheetsyncAlert_(problem);
  }
}

function buildCohorts() {
  sheetsyncCall_("build");
}

function resolvePhase() {
  sheetsyncCall_("resolve");
}

function undoPhase() {
  sheetsyncCall_("undo");
}

function endBattle() {
  sheetsyncCall_("end");
}

// The hex wargame's buttons (the same four routes; End Battle is endBattle above).
function buildUnits() {
  sheetsyncCall_("build");
}

function resolveTurn() {
  sheetsyncCall_("resolve");
}

function undoTurn() {
  sheetsyncCall_("undo");
}

// Each system's steps, in order: [caption, function, action] (sheetsync's Step caption,
// its sub with a lower-case first letter, and the route).
const SHEETSYNC_STEPS = {
  bbn: [
    ["Build Cohorts", "buildCohorts", "build"],
    ["Resolve Phase", "resolvePhase", "resolve"],
    ["Undo Phase", "undoPhase", "undo"],
    ["End Battle", "endBattle", "end"],
  ],
  hexwar: [
    ["Build Units", "buildUnits", "build"],
    ["Resolve Turn", "resolveTurn", "resolve"],
    ["Undo Turn", "undoTurn", "undo"],
    ["End Battle", "endBattle", "end"],
  ],
  exalted: [
    ["Build Units", "buildUnits", "build"],
    ["Next Tick", "resolveTurn", "resolve"],
    ["Undo Tick", "undoTurn", "undo"],
    ["End Battle", "endBattle", "end"],
  ],
};
const SHEETSYNC_DEFAULT_SYSTEM = "bbn";  // a tracker without a mark

// The id of the tracker's rule system, from its mark in State!B1 ("hexwar@1" -> "hexwar").
function sheetsyncSystem_() {
  let mark = "";
  try {
    const state = SpreadsheetApp.getActiveSpreadsheet().getSheetByName("State");
    mark = state === null ? "" : String(state.getRange("B1").getValue()).trim();
  } catch (e) {
    mark = "";  // no spreadsheet to read (a standalone project): the default menu
  }
  return mark === "" ? SHEETSYNC_DEFAULT_SYSTEM : mark.split("@")[0].trim().toLowerCase();
}

function onOpen() {
  const system = sheetsyncSystem_();
  const menu = SpreadsheetApp.getUi().createMenu("Sheetsync");
  const steps = SHEETSYNC_STEPS[system];
  if (steps === undefined) {
    // A mark this script does not know: every step still posts to its route, and the
    // endpoint says what it makes of the tracker.
    menu.addItem("Build", "buildCohorts")
      .addItem("Resolve", "resolvePhase")
      .addItem("Undo", "undoPhase")
      .addItem("End Battle", "endBattle");
  } else {
    steps.forEach((step) => menu.addItem(step[0], step[1]));
  }
  menu.addToUi();
}
