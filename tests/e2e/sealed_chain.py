# Re-computes and walks every period's chain of a sealed series from what the sidecar stored,
# with the functions of docs/sealed-series.md's Python block (on PYTHONPATH as sealed_series.py,
# put there by sealed-chain.test.mjs from the docs as they are). The dump is canonical Extended
# JSON: {"sequence", "field", "sealFields", "documents", "ledger", "counters"}, of a sequence that
# resets (each counter id ends with its period). Prints each chain; an assertion names the first
# link that does not verify.
#   PYTHONPATH=DIR python3 sealed_chain.py DUMP.json
import json
import sys

from sealed_series import walk

dump = json.load(open(sys.argv[1], encoding="utf-8"))
field, sequence = dump["field"], dump["sequence"]
links = {}  # series → its links


def add(series, kind, number, fields, seal):
    link = {"series": series, "kind": kind, "number": number, "period": series.rsplit("/", 1)[1], "fields": fields}
    links.setdefault(series, []).append({"link": link, "seal": seal})


def integer(value):  # {"$numberLong": "3"} or {"$numberInt": "3"}
    (text,) = value.values()
    return int(text)


MISSING = object()


def sealed_values(document):
    """The document's values at the sealed (dotted) paths; a path it lacks is left out."""
    fields = {}
    for path in dump["sealFields"]:
        value = document
        for key in path.split("."):
            value = value.get(key, MISSING) if isinstance(value, dict) else MISSING
        if value is not MISSING:
            fields[path] = value
    return fields


for document in dump["documents"]:
    series = f'{sequence}/{document[field + "Period"]}'
    add(series, "issue", integer(document[field]), sealed_values(document), document[field + "Seal"])
for entry in dump["ledger"]:
    series, number = entry["_id"]["counter"], integer(entry["_id"]["number"])
    if entry["kind"] == "void":
        add(series, "void", number, {}, entry["seal"])
    else:  # a deletion, and the issue link the deleted document held
        add(series, "deletion", number, entry["removed"]["fields"], entry["seal"])
        add(series, "issue", number, entry["removed"]["fields"], entry["removed"]["seal"])

heads = {counter["_id"]: counter["seal"]["hash"] for counter in dump["counters"]}
anchors = {None}  # the first period sealed names no link before it
for series in sorted(links):  # one sequence, no scope: its periods in time order
    chain = walk(links[series], anchors)
    assert chain[-1]["seal"]["hash"] == heads[series], f"{series}: the counter's head is not the chain's end"
    anchors = {item["seal"]["hash"] for item in chain}
    print(f"{series}: " + ", ".join(f'{item["link"]["kind"]}:{item["link"]["number"]}' for item in chain))
print(f"{sum(map(len, links.values()))} links re-computed")
