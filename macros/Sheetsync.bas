Attribute VB_Name = "Sheetsync"
' The four battle buttons of a sheetsync workbook in desktop Excel.
'
' Each button runs one step of sheetsync in Python through xlwings' RunPython, which
' comes from the "xlwings" VBA module embedded in this workbook (open-source xlwings,
' no add-in needed).  sheetsync reports its own errors in a message box.
Option Explicit

' The tracker's sheets are protected without a password, so that a Tracker typing into a
' computed cell gets a warning.  Excel also refuses changes made by code to a protected
' sheet, so each button lifts the protection for the step and puts it back afterwards,
' even when the step fails.
Private Function Unguard() As Collection
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

Private Sub Guard(guarded As Collection)
    Dim sheetName As Variant
    For Each sheetName In guarded
        ThisWorkbook.Worksheets(CStr(sheetName)).Protect DrawingObjects:=False, Contents:=True, _
            Scenarios:=False, AllowFormattingColumns:=True, AllowFormattingRows:=True
    Next sheetName
End Sub

Private Sub Step(code As String)
    Dim guarded As Collection
    Set guarded = Unguard()
    On Error GoTo Finally
    RunPython code
Finally:
    Guard guarded
End Sub

Public Sub BuildCohorts()
    Step "import sheetsync.app.buttons as b; b.build()"
End Sub

Public Sub ResolvePhase()
    Step "import sheetsync.app.buttons as b; b.resolve()"
End Sub

Public Sub UndoPhase()
    Step "import sheetsync.app.buttons as b; b.undo()"
End Sub

Public Sub EndBattle()
    Step "import sheetsync.app.buttons as b; b.end()"
End Sub
