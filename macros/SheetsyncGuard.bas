Attribute VB_Name = "SheetsyncGuard"
' The tracker's sheets are protected without a password, so that a Tracker typing into a
' computed cell gets a warning.  Excel also refuses changes made by code to a protected
' sheet, so each button lifts the protection for the step and puts it back afterwards,
' even when the step fails.  Used by the Sheetsync and SheetsyncRemote modules.
Option Explicit

Public Function Unguard() As Collection
    Dim guarded As New Collection
    Dim ws As Worksheet
    For Each ws In ThisWorkbook.Worksheets
        If ws.ProtectContents Then
            ws.Unprotect
            guarded.Add ws.Name
        End If
    Next ws
    Set Unguard = guarded
End Function

Public Sub Guard(guarded As Collection)
    Dim sheetName As Variant
    For Each sheetName In guarded
        ThisWorkbook.Worksheets(CStr(sheetName)).Protect DrawingObjects:=False, Contents:=True, _
            Scenarios:=False, AllowFormattingColumns:=True, AllowFormattingRows:=True
    Next sheetName
End Sub
