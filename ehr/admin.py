"""Read-only admin over the imported record: the importer is the only writer of these tables."""

from django.contrib import admin

from ehr.mimic_tables import TABLES


class ReadOnlyMimicAdmin(admin.ModelAdmin):
    list_per_page = 50
    show_full_result_count = False  # COUNT(*) over labevents is slow on real MIMIC

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


def _admin_for(columns: list[str]) -> type[admin.ModelAdmin]:
    ids = [c for c in ("subject_id", "hadm_id") if c in columns]
    shown = ids + [c for c in columns if c not in ids][: 6 - len(ids)]
    return type(
        "Admin",
        (ReadOnlyMimicAdmin,),
        {"list_display": shown, "search_fields": [f"={c}" for c in ids] or [f"{columns[0]}"]},
    )


for spec in TABLES.values():
    admin.site.register(spec.model, _admin_for(spec.columns))
