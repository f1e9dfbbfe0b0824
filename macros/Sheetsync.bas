Attribute VB_Name = "Sheetsync"
' The four battle buttons of a sheetsync workbook in desktop Excel.
'
' Each button runs one step of sheetsync in Python through xlwings' RunPython, which
' comes from the "xlwings" VBA module embedded in this workbook (open-source xlwings,
' no add-in needed).  sheetsync reports its own errors in a message box.
Option Explicit

Private Sub RunStep(code As String)
    Dim guarded As Collection
    Set guarded = SheetsyncGuard.Unguard()
    On Error GoTo Finally
    RunPython code
Finally:
    SheetsyncGuard.Guard guarded
End Sub

Public Sub BuildCohorts()
    RunStep "import sheetsync.app.buttons as b; b.build()"
End Sub

Public Sub ResolvePhase()
    RunStep "import sheetsync.app.buttons as b; b.resolve()"
End Sub

Public Sub UndoPhase()
    RunStep "import sheetsync.app.buttons as b; b.undo()"
End Sub

Public Sub EndBattle()
    RunStep "import sheetsync.app.buttons as b; b.end()"
End Sub
