/**
 * The four battle buttons of a sheetsync Google Sheet.
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
 * Assign the functions to drawings (Assign script: buildCohorts, ...) or use the
 * "Sheetsync" menu that onOpen adds.
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

function onOpen() {
  SpreadsheetApp.getUi()
    .createMenu("Sheetsync")
    .addItem("Build cohorts", "buildCohorts")
    .addItem("Resolve phase", "resolvePhase")
    .addItem("Undo phase", "undoPhase")
    .addItem("End battle", "endBattle")
    .addToUi();
}
