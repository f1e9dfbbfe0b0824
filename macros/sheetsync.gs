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
 *                      <base>/undo and <base>/end
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

const SHEETSYNC_DEFAULT_URL = "http://127.0.0.1:8000/api";
const SHEETSYNC_LOCK_WAIT_MS = 60000;  // a resolve takes a few seconds; wait for a busy one

function sheetsyncCall_(action) {
  const props = PropertiesService.getScriptProperties();
  const base = (props.getProperty("SHEETSYNC_URL") || SHEETSYNC_DEFAULT_URL).replace(/\/+$/, "");
  const apiKey = props.getProperty("SHEETSYNC_API_KEY") || "";
  const lock = LockService.getDocumentLock();
  if (lock === null) {
    throw new Error("sheetsync: these buttons must be in the spreadsheet's own script " +
                    "(Extensions > Apps Script), not in a standalone project.");
  }
  try {
    lock.waitLock(SHEETSYNC_LOCK_WAIT_MS);
  } catch (e) {
    SpreadsheetApp.getUi().alert(
      "sheetsync",
      "Another sheetsync step is still running on this spreadsheet (" +
        SHEETSYNC_LOCK_WAIT_MS / 1000 + " s and counting). Nothing was changed: " +
        "wait until it has finished, then click again.",
      SpreadsheetApp.getUi().ButtonSet.OK
    );
    return;
  }
  try {
    runPython(base + "/" + action, { auth: apiKey });
    SpreadsheetApp.flush();  // every change applied before the next step may read
  } finally {
    lock.releaseLock();
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
