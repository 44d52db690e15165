#!/usr/bin/env python3
"""Checks a SARIF log against the required structure of SARIF 2.1.0 (OASIS
sarif-v2.1.0 schema: sarifLog.version/runs, run.tool.driver.name,
result.message.text or id, valid levels, locations, rule references) and
prints `ruleId level line` per result."""
import json
import sys

LEVELS = {"none", "note", "warning", "error"}


def fail(msg):
    print("invalid SARIF:", msg)
    sys.exit(1)


def main(path):
    log = json.load(open(path))
    if log.get("version") != "2.1.0":
        fail("version must be 2.1.0")
    runs = log.get("runs")
    if not isinstance(runs, list) or not runs:
        fail("runs must be a non-empty array")
    for run in runs:
        driver = run.get("tool", {}).get("driver")
        if not isinstance(driver, dict) or not isinstance(driver.get("name"), str):
            fail("run.tool.driver.name is required")
        rules = driver.get("rules", [])
        ids = [r.get("id") for r in rules]
        if any(not isinstance(i, str) for i in ids):
            fail("every rule needs a string id")
        for result in run.get("results", []):
            message = result.get("message", {})
            if not isinstance(message.get("text"), str) and "id" not in message:
                fail("result.message needs text or id")
            level = result.get("level", "warning")
            if level not in LEVELS:
                fail("bad level " + str(level))
            rule = result.get("ruleId")
            if rule is not None and rule not in ids:
                fail("ruleId %s is not a rule of the driver" % rule)
            index = result.get("ruleIndex")
            if index is not None and (index >= len(ids) or ids[index] != rule):
                fail("ruleIndex does not match ruleId")
            line = "-"
            for loc in result.get("locations", []):
                phys = loc.get("physicalLocation")
                if phys is not None:
                    uri = phys.get("artifactLocation", {}).get("uri")
                    if not isinstance(uri, str):
                        fail("artifactLocation.uri must be a string")
                    region = phys.get("region")
                    if region is not None:
                        start = region.get("startLine")
                        if not isinstance(start, int) or start < 1:
                            fail("region.startLine must be >= 1")
                        line = str(start)
                for logical in loc.get("logicalLocations", []):
                    if not isinstance(logical.get("name"), str):
                        fail("logicalLocation.name must be a string")
            print(rule, level, line)


if __name__ == "__main__":
    main(sys.argv[1])
