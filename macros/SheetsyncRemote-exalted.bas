Attribute VB_Name = "SheetsyncRemote"
' The four battle buttons of a sheetsync workbook that talks to the sheetsync HTTP
' endpoint instead of a local Python (xlwings RunRemotePython, from the "Remote",
' "Web*" and "xlwings" modules embedded in this workbook).
'
' Settings, each a workbook-level name (for instance a cell on a settings sheet named
' SHEETSYNC_URL) that falls back to the constant below:
'   SHEETSYNC_URL      base URL of the endpoint; the buttons post to <base>/build,
'                      <base>/resolve, <base>/undo and <base>/end
'   SHEETSYNC_API_KEY  sent as the Authorization header; when empty, xlwings uses the
'                      AUTH entry of the xlwings.conf sheet, if any
'
' Use this module or the Sheetsync module in a workbook, not both: they define the same
' macro names.
Option Explicit

Private Const DEFAULT_URL As String = "http://127.0.0.1:8000/api"
Private Const DEFAULT_API_KEY As String = ""

Private Function Setting(settingName As String, fallback As String) As String
    Dim value As Variant
    On Error Resume Next
    value = ThisWorkbook.Names(settingName).RefersToRange.Value
    If Err.Number <> 0 Then
        Err.Clear
        value = Application.Evaluate(ThisWorkbook.Names(settingName).RefersTo)
    End If
    On Error GoTo 0
    If IsError(value) Then
        Setting = fallback
    ElseIf IsEmpty(value) Then
        Setting = fallback
    ElseIf Trim(CStr(value)) = "" Then
        Setting = fallback
    Else
        Setting = Trim(CStr(value))
    End If
End Function

Private Sub CallEndpoint(action As String)
    Dim baseUrl As String
    baseUrl = Setting("SHEETSYNC_URL", DEFAULT_URL)
    Do While Right(baseUrl, 1) = "/"
        baseUrl = Left(baseUrl, Len(baseUrl) - 1)
    Loop
    Dim guarded As Collection
    Set guarded = SheetsyncGuard.Unguard()
    On Error GoTo Finally
    RunRemotePython baseUrl & "/" & action, auth:=Setting("SHEETSYNC_API_KEY", DEFAULT_API_KEY)
Finally:
    SheetsyncGuard.Guard guarded
End Sub

Public Sub BuildUnits()
    CallEndpoint "build"
End Sub

Public Sub ResolveTurn()
    CallEndpoint "resolve"
End Sub

Public Sub UndoTurn()
    CallEndpoint "undo"
End Sub

Public Sub EndBattle()
    CallEndpoint "end"
End Sub
