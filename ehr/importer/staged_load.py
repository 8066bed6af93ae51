"""The staged whole-table PostgreSQL load, step by step (the steps themselves: :mod:`ehr.importer.staging`).

Create the staging table (committed, so other connections can load and index it); copy a
large single file over parallel COPY streams (:mod:`ehr.importer.parallel_copy`), or else load
the files the usual way in one transaction; ANALYZE; build the key and indexes at once; swap.
Any failure drops the staging table and leaves the live one as it was.
"""

import contextlib
import time
from typing import TYPE_CHECKING

from django.db import DatabaseError, transaction

from ehr.importer import parallel_copy, staging
from ehr.importer.columns import implausible_conditions, plan_header
from ehr.importer.source import TableFile
from ehr.mimic_tables import MimicTableSpec

if TYPE_CHECKING:
    from ehr.importer.table_import import FileLoad


def load_staged(*, spec: MimicTableSpec, load: "FileLoad") -> None:
    """Load into a staging table, build its indexes in parallel, swap it in; drop it on any failure."""
    entry, bar = load.entry, load.progress.bar
    with staging.exclusive_import(spec=spec):
        plan = staging.plan_staging(spec=spec)
        try:
            with transaction.atomic():
                staging.create_staging_table(
                    plan=plan, implausible=implausible_conditions(spec=spec, columns=spec.columns)
                )
            tried, copied = _copy_in_parallel(spec=spec, plan=plan, load=load)
            with transaction.atomic():
                staging.use_staging_names(plan=plan)
                if copied is not None:
                    load.add_copied(rows=copied)
                else:
                    if tried:  # streams that finished before the fallback committed their rows
                        staging.empty_staging_table(plan=plan)
                    load.plausibility_enforced = True
                    load.run()
                bar.set_postfix_str("analyzing")
                staging.analyze_staging_table(plan=plan)
            started = time.perf_counter()
            built: list[str] = []

            def on_built(name: str) -> None:
                built.append(name)
                bar.set_postfix_str(f"indexing {len(built)}/{len(plan.jobs)}")

            bar.set_postfix_str(f"indexing 0/{len(plan.jobs)}")
            entry.index_seconds = staging.build_indexes(plan=plan, on_done=on_built)
            bar.set_postfix_str("swapping")
            staging.swap_in(plan=plan)
            entry.rebuild_seconds = time.perf_counter() - started
        except BaseException:
            # The live table was never touched; only the staging copy is left to remove.
            with contextlib.suppress(DatabaseError):
                staging.drop_staging_table(plan=plan)
            raise


def _copy_in_parallel(*, spec: MimicTableSpec, plan: staging.StagingPlan, load: "FileLoad") -> tuple[bool, int | None]:
    """(tried, rows): a table of one large file the raw path may take goes over parallel COPY streams.

    ``rows`` is ``None`` when it was not tried or fell back (the usual load then names any problem).
    """
    if not load.raw_allowed or len(load.files) != 1:
        return False, None
    path = load.files[0].path
    if path.stat().st_size < parallel_copy.MIN_FILE_BYTES:
        return False, None
    with TableFile(path) as source:
        header_bytes, header = source.read_header()
        header_plan = plan_header(spec=spec, header=header, label=str(path))
        if not header_plan.raw_copy_ok:
            return False, None
        load.header_warnings(label=str(path), plan=header_plan)
        rows = parallel_copy.copy_file_in_parallel(
            table=plan.staging,
            columns=header_plan.load_columns,
            header=header_bytes,
            chunks=source.chunks(),
            on_chunk=lambda: load.progress.show(source),
        )
    return True, rows
