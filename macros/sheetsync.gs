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
 */

const SHEETSYNC_DEFAULT_URL = "http://127.0.0.1:8000/api";

function sheetsyncCall_(action) {
  const props = PropertiesService.getScriptProperties();
  const base = (props.getProperty("SHEETSYNC_URL") || SHEETSYNC_DEFAULT_URL).replace(/\/+$/, "");
  const apiKey = props.getProperty("SHEETSYNC_API_KEY") || "";
  runPython(base + "/" + action, { auth: apiKey });
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
