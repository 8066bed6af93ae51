"""Stored gold calls and write-call rubric checks move to the released tool contract (issue 13).

Generated sessions get the contract's tool schemas in ``tools``/``tools_zh`` (imported sessions keep the
schemas of their record). Arguments the contract has no place for are not lost: they are kept in ``GoldStep.extra["legacy_arguments"]``
(merged with any kept before). Running the migration again changes nothing: contract arguments map to
themselves and no leftover remains.
"""

from django.db import migrations


def forward(apps, schema_editor):
    from ehr.fhir.legacy import upgrade_arguments
    from ehr.fhir.registry import tool_schemas

    Session = apps.get_model("scenarios", "Session")
    schemas = {"tools": tool_schemas(language="en"), "tools_zh": tool_schemas(language="zh")}
    for session in Session.objects.filter(source="generated").iterator(chunk_size=200):
        if session.tools != schemas["tools"] or session.tools_zh != schemas["tools_zh"]:
            session.tools, session.tools_zh = schemas["tools"], schemas["tools_zh"]
            session.save(update_fields=["tools", "tools_zh"])
    GoldStep = apps.get_model("scenarios", "GoldStep")
    RubricItem = apps.get_model("scenarios", "RubricItem")
    for step in GoldStep.objects.all().iterator(chunk_size=500):
        new, left = upgrade_arguments(tool=step.tool, arguments=step.arguments)
        if new == step.arguments and not left:
            continue
        step.arguments = new
        if left:
            extra = dict(step.extra or {})
            extra["legacy_arguments"] = {**extra.get("legacy_arguments", {}), **left}
            step.extra = extra
        step.save(update_fields=["arguments", "extra"])
    for item in RubricItem.objects.exclude(machine_check=None).iterator(chunk_size=500):
        check = item.machine_check
        if not isinstance(check, dict) or check.get("kind") != "write_call":
            continue
        params, left = upgrade_arguments(tool=check.get("tool", ""), arguments=check.get("params") or {})
        if params == check.get("params") and not left:
            continue
        # A check on a parameter the contract no longer has cannot be checked: keep it, marked, unscored.
        new = {**check, "params": params}
        if left:
            new["legacy_params"] = {**check.get("legacy_params", {}), **left}
        item.machine_check = new
        item.save(update_fields=["machine_check"])


class Migration(migrations.Migration):
    dependencies = [("scenarios", "0001_initial")]
    operations = [migrations.RunPython(forward, migrations.RunPython.noop)]
