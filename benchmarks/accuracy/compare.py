#!/usr/bin/env python3
"""vram-opt's prediction next to a measured table (measure.py's JSON).

For each row: the bytes saved for backward (saved_activation_bytes against
memory.saved_for_backward_bytes) and the CPU step peak
(cpu_sgd_step_peak_above_baseline against memory.peak_bytes minus
memory.persistent_bytes), predicted with --device=cpu and the given
--torch-version. Prints a Markdown table and a summary line.

  python3 compare.py results/torch-2.15-cpu.json --torch-version=2 --vram-opt ../../build/bin/vram-opt
"""
import argparse
import json
import subprocess

# The last nn.Linear of each model: what measure.py's head_only trains.
HEADS = {"resnet18": "fc", "resnet50": "fc", "resnet101": "fc", "gpt_mini": "head",
         "mobilenet_v2": "classifier.1", "vgg11": "classifier.6", "vit_b_16": "heads.head"}
OPTIMIZERS = {"sgd": ["--optimizer=sgd"], "momentum": ["--optimizer=momentum"],
              "adam": ["--optimizer=adam", "--optimizer-impl=for-loop"],
              "adam_foreach": ["--optimizer=adam", "--optimizer-impl=foreach"],
              "nesterov": ["--optimizer=sgd-nesterov", "--optimizer-impl=for-loop"],
              "nesterov_foreach": ["--optimizer=sgd-nesterov", "--optimizer-impl=foreach"],
              "adafactor": ["--optimizer=adafactor", "--optimizer-impl=for-loop"],
              "adafactor_foreach": ["--optimizer=adafactor", "--optimizer-impl=foreach"],
              "lion": ["--optimizer=lion"], "adamw8bit": ["--optimizer=adamw8bit"]}


def flags(row):
    if row["kind"] == "lm":
        f = ["--zoo=" + row["model"], "--batch=%d" % row["batch"], "--seq=%d" % row["size"]]
    else:
        f = ["--zoo=" + row["model"], "--batch=%d" % row["batch"],
             "--image-size=%d" % row["size"], "--num-classes=%d" % row["classes"]]
    if row.get("trainable", "all") == "head_only":
        f.append("--vram-freeze=patterns=* keep=%s.*" % HEADS[row["model"]])
    return f + OPTIMIZERS[row.get("optimizer", "sgd")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("table")
    ap.add_argument("--torch-version", default="2")
    ap.add_argument("--vram-opt", default="vram-opt")
    a = ap.parse_args()
    rows = json.load(open(a.table))
    if isinstance(rows, dict):
        rows = rows.get("rows", list(rows.values()))
    print("| id | saved measured | saved predicted | diff | peak measured | peak predicted | diff |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    exact = within = total = 0
    for row in rows:
        cmd = [a.vram_opt] + flags(row) + ["--mode=train", "--device=cpu",
                                           "--torch-version=" + a.torch_version, "--format=json"]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            reason = (run.stderr.strip().splitlines() or ["exit %d" % run.returncode])[-1]
            print("| %s | not predicted: %s ||||||" % (row["id"], reason.replace("|", "/")))
            continue
        report = json.loads(run.stdout)
        mem = report["memory"]
        cells = []
        for measured, predicted in (
                (row.get("saved_activation_bytes"), mem["saved_for_backward_bytes"]),
                (row.get("cpu_sgd_step_peak_above_baseline"),
                 mem["peak_bytes"] - mem["persistent_bytes"])):
            if measured is None:
                cells += ["", "", ""]
                continue
            rel = (predicted - measured) / measured if measured else 0.0
            cells += ["{:,}".format(measured), "{:,}".format(predicted), "%+.3f%%" % (100 * rel)]
        print("| %s | %s |" % (row["id"], " | ".join(cells)))
        if row.get("saved_activation_bytes") is not None:
            total += 1
            exact += mem["saved_for_backward_bytes"] == row["saved_activation_bytes"]
            within += abs(mem["saved_for_backward_bytes"] - row["saved_activation_bytes"]) <= \
                0.005 * row["saved_activation_bytes"]
    print("\nsaved bytes: %d of %d rows byte-equal, %d within 0.5%%" % (exact, total, within))


if __name__ == "__main__":
    main()
