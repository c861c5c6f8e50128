"""Adds the files of a directory to a built wheel, under a path inside it, with their RECORD
lines (PEP 376/427: `path,sha256=<urlsafe base64, unpadded>,size`), before the .dist-info
entries, as maturin orders a wheel. Entries keep their order and times; the added ones get the
wheel format's earliest time, so the same inputs give the same wheel.

    python3 add_to_wheel.py WHEEL DIR PATH_IN_WHEEL
"""

import base64
import hashlib
import os
import sys
import zipfile

wheel, source, prefix = sys.argv[1:4]
with zipfile.ZipFile(wheel) as old:
    entries = [(info, old.read(info)) for info in old.infolist()]

added = []
for name in sorted(os.listdir(source)):
    with open(os.path.join(source, name), "rb") as f:
        data = f.read()
    info = zipfile.ZipInfo(f"{prefix}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
    info.external_attr = 0o644 << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    added.append((info, data))

record = next(info.filename for info, _ in entries if info.filename.endswith(".dist-info/RECORD"))
lines = []
for info, data in added:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    lines.append(f"{info.filename},sha256={digest},{len(data)}")

first_dist_info = next(i for i, (info, _) in enumerate(entries) if ".dist-info/" in info.filename)
entries[first_dist_info:first_dist_info] = added
for i, (info, data) in enumerate(entries):
    if info.filename == record:
        # RECORD lists itself last, with no digest.
        own, rest = f"{record},,", [line for line in data.decode().splitlines() if line]
        rest = [line for line in rest if line != own]
        entries[i] = (info, ("\n".join(rest + lines + [own]) + "\n").encode())

temporary = wheel + ".tmp"
with zipfile.ZipFile(temporary, "w") as new:
    for info, data in entries:
        new.writestr(info, data)
os.replace(temporary, wheel)
