#!/usr/bin/env bash
# Regenerate patches/ (and patches/series) from the work tree's commits
# since the 'base' tag; the cover letter comes from patches/cover-letter.txt
# (first line: subject; rest: body).
#
# usage: export.sh <kernel-tree>
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
tree=${1:?usage: export.sh <kernel-tree>}
die() { echo "export: error: $*" >&2; exit 1; }
git -C "$tree" rev-parse -q --verify base >/dev/null || die "$tree has no 'base' tag (run 'make tree')"
[ -z "$(git -C "$tree" status --porcelain --untracked-files=no)" ] ||
	die "$tree has uncommitted changes: commit or drop them first"

n=$(git -C "$tree" rev-list --count base..HEAD)
rm -f "$top"/patches/[0-9][0-9][0-9][0-9]-*.patch
if [ "$n" = 0 ]; then
	: >"$top/patches/series"
	echo "export: no commits since base; patches/ emptied"
	exit 0
fi
git -C "$tree" format-patch -q --zero-commit --no-signature --cover-letter \
	-o "$top/patches" base..HEAD
cover="$top/patches/0000-cover-letter.patch"
if [ -f "$top/patches/cover-letter.txt" ]; then
	python3 - "$cover" "$top/patches/cover-letter.txt" <<'PY'
import sys
cover, src = sys.argv[1], sys.argv[2]
text = open(src).read().split("\n", 1)
subject, body = text[0], (text[1] if len(text) > 1 else "").strip("\n")
s = open(cover).read()
s = s.replace("*** SUBJECT HERE ***", subject).replace("*** BLURB HERE ***", body)
open(cover, "w").write(s)
PY
fi
for p in "$top"/patches/[0-9][0-9][0-9][0-9]-*.patch; do
	p=$(basename "$p")
	[ "$p" = 0000-cover-letter.patch ] || echo "$p"
done >"$top/patches/series"
echo "export: wrote $n patches and a cover letter to patches/"
