#!/usr/bin/env bash
# Install the Debian packages the tests need; quick no-op when they are all there.
#   libreoffice-calc-nogui  LibreOffice Calc headless: opens, recalculates, converts workbooks
#   python3-uno             LibreOffice's Python bridge, driven by tests/libreoffice.py
#   poppler-utils           pdftoppm, which turns a rendered sheet (PDF) into a PNG
#   fonts-dejavu-core, fonts-liberation2
#                           fonts for rendering (liberation2 is only recommended by LibreOffice)
#   nodejs                  runs the Apps Script buttons (macros/sheetsync.gs) against stand-ins in a test
#   chromium                headless browser for the web page's tests (tests/test_web_page.py, driven by
#                           Playwright at /usr/bin/chromium) and scripts/web_screenshot.py
set -euo pipefail

packages=(libreoffice-calc-nogui python3-uno poppler-utils fonts-dejavu-core fonts-liberation2 nodejs chromium)

missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done

if [ "${#missing[@]}" -eq 0 ]; then
    echo "system packages already installed: ${packages[*]}"
    exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
echo "installing: ${missing[*]}"
$sudo apt-get update
$sudo apt-get install -y --no-install-recommends "${missing[@]}"
