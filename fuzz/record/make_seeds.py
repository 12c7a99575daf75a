#!/usr/bin/env python3
"""Writes the seed corpus of the record fuzz target (fuzz/record/corpus/).

Each seed is one input of fuzz/record_fuzz.cpp: a first byte, then either a
recording file as the host writes it (the byte is 0: the 8-byte magic and a
gzip stream) or the stream of length-prefixed RecordEntry messages before
compression (the byte is 1). The messages are written below as text protos
and encoded with `protoc --encode`; a recorded call's request and response
(bytes fields) are encoded first and embedded. Run from the repository root:

    python3 fuzz/record/make_seeds.py
"""
import gzip
import os
import subprocess

PROTO = "proto/schedplug/v1/record.proto"
OUT = "fuzz/record/corpus"
MAGIC = b"SPREC\0\0\x01"


def encode(message, text):
    return subprocess.run(
        ["protoc", "-I", "proto", "--encode=schedplug.v1." + message, PROTO],
        input=text.encode(), capture_output=True, check=True).stdout


def quoted(data):
    return '"' + "".join("\\%03o" % b for b in data) + '"'


def call(method, table_version, request_type, request, response_type,
         response, status=0):
    return "call { method: %s table_version: %d status_code: %d " \
           "duration_micros: 40 table_nodes: 3 request: %s response: %s }" % (
               method, table_version, status,
               quoted(encode(request_type, request)),
               quoted(encode(response_type, response)))


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def stream(entries):
    out = b""
    for text in entries:
        data = encode("RecordEntry", text)
        out += varint(len(data)) + data
    return out


def nodes(n, base=0):
    return " ".join('upserts { index: %d name: "node-%d" }' % (base + i, base + i)
                    for i in range(n))


HEADER = ('header { epoch: 7 sequence: 1 plugin_set { generation: 1 '
          'config: "apiVersion: kubescheduler.config.k8s.io/v1\\n'
          'kind: KubeSchedulerConfiguration\\n" '
          'plugins { name: "Reloadable" version: "1.0.0" } } }')
SESSION = ('session { session_id: "s1" handshake { protocol_version: '
           'PROTOCOL_VERSION_1 client_id: "seed" profiles { scheduler_name: '
           '"default-scheduler" plugins: "Reloadable" } } }')
CHECKPOINT = 'checkpoint { session_id: "s1" table { full: true new_version: 1 %s } }' % nodes(3)
POD = 'pod { namespace: "default" name: "p" uid: "u1" }'

PRE_FILTER = call(
    "RECORDED_METHOD_PRE_FILTER", 2, "PreFilterRequest",
    'session_id: "s1" scheduler_name: "default-scheduler" %s '
    'delta { base_version: 1 new_version: 2 removed: 2 '
    'upserts { index: 2 name: "node-2b" } upserts { index: 3 name: "node-3" } }'
    % POD,
    "PreFilterResponse",
    'table_version: 2 plugins: "Reloadable" skipped: false '
    'reasons: "rejected by Reloadable v1" rejected_nodes: 1 rejected_by: 0 '
    'codes: CODE_UNSCHEDULABLE reason: 0 scores_ahead { nodes: 0 nodes: 2 '
    'nodes: 3 plugins { plugin: "Reloadable" raw: 90 raw: 70 raw: 60 '
    'normalization: NORMALIZATION_LINEAR } }')
FILTER_NODES = call(
    "RECORDED_METHOD_FILTER_NODES", 2, "FilterNodesRequest",
    'session_id: "s1" scheduler_name: "default-scheduler" %s '
    'table_version: 2 evaluate: 3' % POD,
    "PreFilterResponse",
    'plugins: "Reloadable" unfinished { plugin: "Reloadable" reason: "slow" }')
FILTER = call(
    "RECORDED_METHOD_FILTER", 2, "FilterRequest",
    'session_id: "s1" scheduler_name: "default-scheduler" %s '
    'node { index: 0 name: "node-0" }' % POD,
    "FilterResponse",
    'code: CODE_UNSCHEDULABLE plugin: "Reloadable" reason: "no"')
PRE_SCORE = call(
    "RECORDED_METHOD_PRE_SCORE", 2, "PreScoreRequest",
    'session_id: "s1" scheduler_name: "default-scheduler" %s '
    'table_version: 2 nodes: 0 nodes: 2' % POD,
    "PreScoreResponse",
    'plugins { plugin: "Reloadable" scores: 100 scores: 0 '
    'normalization: NORMALIZATION_NONE } '
    'plugins { plugin: "Other" raw: 5 raw: 9 normalization: '
    'NORMALIZATION_REVERSE } plugins { plugin: "Broken" error: "failed" }')
GAP = 'gap { session_id: "s1" calls: 2 deltas { base_version: 2 new_version: 3 %s } }' % nodes(2, 4)

CYCLE = [HEADER, SESSION, CHECKPOINT, PRE_FILTER, FILTER_NODES, FILTER,
         PRE_SCORE, GAP]

# What a hostile or damaged recording holds: indices past any table, a
# delta the host would refuse, answers whose indices point nowhere, scores
# whose weighted sums overflow.
HUGE_SLOT = [HEADER, SESSION, CHECKPOINT, call(
    "RECORDED_METHOD_PRE_FILTER", 2, "PreFilterRequest",
    'session_id: "s1" %s delta { base_version: 1 new_version: 2 '
    'upserts { index: 4294967295 name: "far" } }' % POD,
    "PreFilterResponse", "")]
REFUSED = [HEADER, SESSION, CHECKPOINT,
           'gap { session_id: "s1" deltas { base_version: 1 new_version: 2 '
           'removed: 9 removed: 1 removed: 1 upserts { index: 0 name: "" } '
           'upserts { index: 1048575 name: "edge" } } }',
           'checkpoint { session_id: "s1" table { full: true new_version: 5 '
           'upserts { index: 1024 name: "a" } upserts { index: 1024 name: "b" } } }']
BAD_INDICES = [HEADER, SESSION, CHECKPOINT, call(
    "RECORDED_METHOD_PRE_FILTER", 1, "PreFilterRequest",
    'session_id: "s1" %s' % POD,
    "PreFilterResponse",
    'plugins: "A" reasons: "r" rejected_nodes: 4000000000 rejected_nodes: 1 '
    'rejected_by: 77 reason: 4294967295 codes: CODE_ERROR '
    'scores_ahead { nodes: 1 plugins { raw: 1 raw: 2 raw: 3 '
    'normalization: NORMALIZATION_LINEAR } }'), call(
    "RECORDED_METHOD_PRE_SCORE", 1, "PreScoreRequest",
    'session_id: "s1" %s nodes: 0 nodes: 1' % POD,
    "PreScoreResponse",
    'plugins { scores: 9223372036854775807 scores: -9223372036854775808 } '
    'plugins { scores: 9223372036854775807 } '
    'plugins { scores: 9223372036854775807 } '
    'plugins { scores: -9223372036854775808 scores: 1 scores: 2 } '
    'plugins { raw: -9223372036854775808 raw: 9223372036854775807 '
    'normalization: NORMALIZATION_REVERSE }')]

SEEDS = {
    "cycle-compressed": b"\0" + MAGIC + gzip.compress(stream(CYCLE), mtime=0),
    "cycle-entries": b"\1" + stream(CYCLE),
    "cut-short": b"\0" + (MAGIC + gzip.compress(stream(CYCLE), mtime=0))[:200],
    "huge-slot": b"\1" + stream(HUGE_SLOT),
    "refused-deltas": b"\1" + stream(REFUSED),
    "bad-indices": b"\1" + stream(BAD_INDICES),
    "other-version": b"\0SPREC\0\0\x09" + gzip.compress(b"", mtime=0),
}

os.makedirs(OUT, exist_ok=True)
for name, data in SEEDS.items():
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
    print("%s/%s: %d bytes" % (OUT, name, len(data)))
