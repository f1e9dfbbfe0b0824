"""Backends that implement :class:`sheetsync.sheets.backend.SheetBackend` for real
spreadsheets: Excel files (openpyxl), live workbooks (xlwings) and Google Sheets (gspread)."""
