#!/usr/bin/env python3
"""Checks a SARIF log against the required structure of SARIF 2.1.0 (OASIS
sarif-v2.1.0 schema: sarifLog.version/runs, run.tool.driver.name,
result.message.text or id, valid levels, locations, rule references) and
what GitHub code scanning documents for results to show ("SARIF support for
code scanning": `$schema`, rules with shortDescription, fullDescription and
help, every result with a physicalLocation whose artifactLocation.uri is
relative (to a uriBaseId the run defines) and a region with startLine, and
partialFingerprints), then prints `ruleId level line` per result."""
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
    if not isinstance(log.get("$schema"), str) or "sarif" not in log["$schema"]:
        fail("$schema must name the SARIF 2.1.0 schema")
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
        for r in rules:
            for key in ("shortDescription", "fullDescription", "help"):
                if not isinstance(r.get(key, {}).get("text"), str):
                    fail("rule %s needs %s.text" % (r.get("id"), key))
        bases = run.get("originalUriBaseIds", {})
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
            if not isinstance(result.get("partialFingerprints"), dict):
                fail("result needs partialFingerprints")
            line = "-"
            if not result.get("locations"):
                fail("result needs a location")
            for loc in result.get("locations", []):
                phys = loc.get("physicalLocation")
                if phys is None:
                    fail("every location needs a physicalLocation")
                artifact = phys.get("artifactLocation", {})
                uri = artifact.get("uri")
                if not isinstance(uri, str):
                    fail("artifactLocation.uri must be a string")
                base = artifact.get("uriBaseId")
                if base is not None and base not in bases:
                    fail("uriBaseId %s is not in originalUriBaseIds" % base)
                if base is None and ":" not in uri:
                    fail("relative uri %s needs a uriBaseId" % uri)
                region = phys.get("region")
                if region is None:
                    fail("every physicalLocation needs a region")
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
