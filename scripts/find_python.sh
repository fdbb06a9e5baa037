#!/usr/bin/env sh
# Print the path of a working Python X.Y interpreter, or nothing. pyenv installs come first
# because pyenv's shims exist for versions that are installed but not selected, and fail.
want="$1"
for py in "$HOME"/.pyenv/versions/"$want".*/bin/python $(command -v "python$want" 2>/dev/null); do
  if [ -x "$py" ] && "$py" -c "import sys; sys.exit(sys.version_info[:2] != tuple(map(int, '$want'.split('.'))))" 2>/dev/null; then
    echo "$py"
    exit 0
  fi
done
