#!/usr/bin/env bash
# Check that simcli's HTML report renders in a real browser (headless Chromium).
#
#   scripts/check_html_render.sh [WORK_DIR]
#
# 1. installs Debian's chromium if /usr/bin/chromium is missing (apt-get; needs root or sudo),
# 2. makes a small run (forecasts-cubes, 5000 games) into WORK_DIR/run,
# 3. writes WORK_DIR/report.html with simcli.report.html.write_html,
# 4. renders it headless at 1400x2000 into WORK_DIR/screenshot.png (no network: the page is
#    self-contained, and the flags turn off Chromium's own background traffic),
# 5. checks the screenshot is a PNG of that size and not a blank page (> 50 kB).
#
# WORK_DIR defaults to a new temporary folder; it is kept so the screenshot can be looked at.
# Environment: GAMES (default 5000), CHROMIUM (default /usr/bin/chromium), PYTHON (default python3).
# Exit code 0 = rendered and checked; anything else = a step failed (the message says which).
set -euo pipefail

CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
PYTHON="${PYTHON:-python3}"
GAMES="${GAMES:-5000}"
WORK="${1:-$(mktemp -d -t simcli-html-XXXXXX)}"
mkdir -p "$WORK"
WORK="$(cd "$WORK" && pwd)"

say() { printf '[check_html_render] %s\n' "$*"; }
fail() { printf '[check_html_render] FAILED: %s\n' "$*" >&2; exit 1; }

# 1. the browser
if [ ! -x "$CHROMIUM" ]; then
    say "chromium not found at $CHROMIUM: installing Debian's chromium"
    if [ "$(id -u)" -eq 0 ]; then SUDO=""; elif command -v sudo >/dev/null; then SUDO="sudo"; else
        fail "need root or sudo to run: apt-get update && apt-get install -y chromium"; fi
    $SUDO apt-get update
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y chromium
    [ -x "$CHROMIUM" ] || fail "chromium still missing at $CHROMIUM after apt-get install"
fi
say "browser: $("$CHROMIUM" --version 2>/dev/null || echo "$CHROMIUM")"

# 2. a small run (the console script if installed, else the module)
if command -v simcli >/dev/null; then SIMCLI=(simcli); else SIMCLI=("$PYTHON" -m simcli.cli); fi
rm -rf "$WORK/run"
"${SIMCLI[@]}" run forecasts-cubes --games "$GAMES" --seed 1 --out "$WORK/run" --no-progress >/dev/null \
    || fail "simcli run failed"
say "run written to $WORK/run"

# 3. the page
"$PYTHON" - "$WORK/run" "$WORK/report.html" <<'EOF' || fail "writing the HTML report failed"
import sys
from pathlib import Path
from simcli.report.html import write_html
page = write_html(Path(sys.argv[1]), Path(sys.argv[2]))
text = page.read_text()
bad = [s for s in ("http://", "https://", "<script src", "<link", "url(") if s in text]
if bad:
    sys.exit(f"page is not self-contained: found {bad}")
images = text.count('<img src="data:image/png;base64,')
print(f"[check_html_render] page {page}: {len(text):,} bytes, {images} embedded images")
EOF

# 4. render it headless
SHOT="$WORK/screenshot.png"
PROFILE="$(mktemp -d -t simcli-chromium-XXXXXX)"
trap 'rm -rf "$PROFILE"' EXIT
rm -f "$SHOT"
timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$PROFILE" --screenshot="$SHOT" --window-size=1400,2000 \
    "file://$WORK/report.html" >"$WORK/chromium.log" 2>&1 \
    || fail "chromium exited with an error (see $WORK/chromium.log)"

# 4b. the verdict must be on screen: the first section of the page
grep -o '<h2 id="[a-z]*"' "$WORK/report.html" | head -1 | grep -q 'id="verdict"' \
    || fail "the page does not open with its verdict"

# 5. check the screenshot
"$PYTHON" - "$SHOT" <<'EOF' || fail "screenshot check failed"
import sys
from pathlib import Path
p = Path(sys.argv[1])
if not p.is_file():
    sys.exit(f"no screenshot at {p}")
data = p.read_bytes()
if data[:8] != b"\x89PNG\r\n\x1a\n":
    sys.exit(f"{p} is not a PNG")
w, h = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
if (w, h) != (1400, 2000):
    sys.exit(f"{p} is {w}x{h}, expected 1400x2000")
if len(data) < 50_000:
    sys.exit(f"{p} is only {len(data)} bytes: the page looks blank")
print(f"[check_html_render] screenshot {p}: {w}x{h}, {len(data):,} bytes")
EOF
say "OK: look at $SHOT"
