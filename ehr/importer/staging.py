"""PostgreSQL whole-table loads through a staging table: keys and indexes built in parallel, then one swap.

Rebuilding a large table's key and indexes one after another is most of what a whole-table
import costs beyond the COPY itself. Building them at the same time needs one connection per
index, and a connection only sees committed rows, so the load cannot stay in one transaction
with the live table. Instead:

1. **load**: a committed transaction creates ``STAGING_SCHEMA.<table>`` (the live table's
   columns, defaults, identity and check constraints, no index; its identity sequence numbering
   on from the live table's, as after TRUNCATE). A large single file is then copied over
   parallel streams (:mod:`ehr.importer.parallel_copy`); otherwise one transaction loads the
   files, with ``search_path`` pointing at the staging schema so the loaders' unqualified table
   name means the staging copy.
   ``ANALYZE`` runs before the commit (a new table has no statistics; it cannot run beside the
   index builds, whose lock conflicts with its own).
2. **index**: each key (as a unique index) and each secondary index is built on its own
   connection, all at the same time; a duplicate key surfaces here as
   :class:`ehr.importer.loaders.DuplicateKey`.
3. **swap**: one short transaction attaches the keys (``USING INDEX``: no rebuild), drops the
   live table and moves the staging one into its schema; the
   index and constraint names are the live table's own (the staging schema keeps them apart).

The live table is not touched before the swap commits, so an import that fails at any stage
leaves the previous rows and indexes exactly as they were (readers even keep reading them
meanwhile; the swap holds the table's lock only for that last transaction). The staging table
is dropped on failure; one left by a killed process is dropped by the next import of the table.
A table with something this would lose or break (foreign keys, views, triggers, grants, row
security, serial defaults, another owner) is loaded the single-transaction way instead:
:func:`staging_blocker` says why.
"""

import contextlib
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass

from django.db import DatabaseError, connection, connections, transaction

from ehr.importer.loaders import duplicate_key_from
from ehr.mimic_tables import MimicTableSpec

STAGING_SCHEMA = "ehr_import_staging"
# On the staging table only, dropped at the swap: COPY refuses an implausible row as it loads it,
# instead of a scan of the whole table after each raw COPY (the single-transaction path's check).
PLAUSIBLE_CHECK = "ehr_import_plausible"
# The most index builds run at once. Each build may also use the server's parallel maintenance
# workers (max_parallel_maintenance_workers is left as configured: on 2 cores, 2 M rows, four
# builds at once took 4.2-5.2 s with the default 2 workers each and 4.6-6.2 s with none; one after
# another 6.8-11.7 s; all under load 5-8 from other work, interleaved).
MAX_PARALLEL_BUILDS = 8


@dataclass(frozen=True)
class IndexJob:
    """One index to build on the staging table; ``constraint`` is set for a primary key / unique key."""

    name: str
    create_sql: str  # CREATE [UNIQUE] INDEX name ON staging-table ...
    constraint: str | None = None  # "PRIMARY KEY" or "UNIQUE"


@dataclass(frozen=True)
class StagingPlan:
    """What a staged load of one table builds and swaps, read from the live table before the load."""

    live_schema: str
    table: str
    live: str  # schema-qualified, quoted as PostgreSQL prints it in index definitions
    jobs: list[IndexJob]
    identity_columns: list[str]

    @property
    def staging(self) -> str:
        return f"{_qn(STAGING_SCHEMA)}.{_qn(self.table)}"


def _qn(name: str) -> str:
    return connection.ops.quote_name(name)


def staging_blocker(*, spec: MimicTableSpec) -> str | None:
    """Why the table cannot be loaded through a staging table and swapped (``None``: it can).

    Inside a caller's transaction (tests, a caller's ``atomic``, autocommit switched off) the
    staged load would not commit, or would commit behind the caller's back, and the index
    connections would not see its rows; the other reasons are things a dropped-and-replaced
    table would lose or that would stop the swap.
    """
    if connection.vendor != "postgresql":
        return "not PostgreSQL"
    if connection.in_atomic_block or not connection.get_autocommit():
        return "inside the caller's transaction"
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT
              c.relkind <> 'r' OR EXISTS (SELECT 1 FROM pg_inherits i WHERE c.oid IN (i.inhrelid, i.inhparent)),
              EXISTS (SELECT 1 FROM pg_constraint f WHERE f.contype = 'f' AND c.oid IN (f.conrelid, f.confrelid)),
              EXISTS (SELECT 1 FROM pg_depend d JOIN pg_rewrite r ON r.oid = d.objid
                      WHERE d.refobjid = c.oid AND r.ev_class <> c.oid),
              EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = c.oid AND NOT t.tgisinternal),
              c.relacl IS NOT NULL OR c.relrowsecurity
                OR EXISTS (SELECT 1 FROM pg_publication_rel p WHERE p.prrelid = c.oid),
              EXISTS (SELECT 1 FROM pg_attrdef a WHERE a.adrelid = c.oid
                      AND pg_get_expr(a.adbin, a.adrelid) LIKE 'nextval(%%'),
              NOT pg_has_role(c.relowner, 'USAGE'),
              NOT (has_database_privilege(current_database(), 'CREATE')
                   OR EXISTS (SELECT 1 FROM pg_namespace n
                              WHERE n.nspname = %s AND has_schema_privilege(n.oid, 'CREATE')))
            FROM pg_class c WHERE c.oid = %s::regclass
            """,
            [STAGING_SCHEMA, spec.db_table],
        )
        flags = cursor.fetchone()
    reasons = [
        "partitioned or inherited",
        "foreign keys",
        "views on it",
        "triggers",
        "grants, row security or a publication",
        "serial column defaults",
        "owned by another role",
        "no privilege to create the staging schema",
    ]
    found = [reason for reason, flag in zip(reasons, flags, strict=True) if flag]
    return ", ".join(found) or None


def plan_staging(*, spec: MimicTableSpec) -> StagingPlan:
    """The live table's keys, indexes and identity columns, as jobs aimed at the staging table."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT n.nspname, format('%%I.%%I', n.nspname, c.relname) "
            "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = %s::regclass",
            [spec.db_table],
        )
        live_schema, live = cursor.fetchone()
        # Largest first, so the longest build starts at once (the key of a large table, usually).
        cursor.execute(
            """
            SELECT ic.relname, pg_get_indexdef(ix.indexrelid),
                   CASE con.contype WHEN 'p' THEN 'PRIMARY KEY' WHEN 'u' THEN 'UNIQUE' END
            FROM pg_index ix
            JOIN pg_class ic ON ic.oid = ix.indexrelid
            LEFT JOIN pg_constraint con ON con.conindid = ix.indexrelid AND con.conrelid = ix.indrelid
            WHERE ix.indrelid = %s::regclass
            ORDER BY con.contype IS NULL, pg_relation_size(ix.indexrelid) DESC, ic.relname
            """,
            [spec.db_table],
        )
        indexes = cursor.fetchall()
        cursor.execute(
            "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attidentity <> '' ORDER BY attnum",
            [spec.db_table],
        )
        identity = [name for (name,) in cursor.fetchall()]
    plan = StagingPlan(live_schema=live_schema, table=spec.db_table, live=live, jobs=[], identity_columns=identity)
    for name, definition, constraint in indexes:
        on_live = f" ON {plan.live} USING "
        if definition.count(on_live) != 1:
            raise RuntimeError(f"cannot aim index {name} at the staging table: {definition}")
        plan.jobs.append(
            IndexJob(
                name=name, create_sql=definition.replace(on_live, f" ON {plan.staging} USING "), constraint=constraint
            )
        )
    return plan


@contextmanager
def exclusive_import(*, spec: MimicTableSpec) -> Iterator[None]:
    """One staged import of a table at a time (two would drop each other's staging table)."""
    key = zlib.crc32(f"ehr-import:{spec.db_table}".encode())
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s)", [key])
    try:
        yield
    finally:
        # A lost connection has released the lock already; its error, not this one, is the news.
        with contextlib.suppress(DatabaseError), connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [key])


def create_staging_table(*, plan: StagingPlan, implausible: list[str]) -> None:
    """An empty staging copy of the live table (committed by the caller, so other connections can load it).

    ``implausible`` are SQL conditions true for a row the validated path refuses as implausible
    (:func:`ehr.importer.columns.implausible_conditions`); the copy refuses such rows with the
    check constraint :data:`PLAUSIBLE_CHECK`.
    """
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE SCHEMA IF NOT EXISTS {_qn(STAGING_SCHEMA)}")
        cursor.execute(f"DROP TABLE IF EXISTS {plan.staging}")  # left by a killed import
        # Everything but the indexes (and the keys, which are indexes): those are built afterwards.
        cursor.execute(f"CREATE TABLE {plan.staging} (LIKE {plan.live} INCLUDING ALL EXCLUDING INDEXES)")
        if implausible:
            check = f"CHECK (NOT ({' OR '.join(implausible)}))"
            cursor.execute(f"ALTER TABLE {plan.staging} ADD CONSTRAINT {_qn(PLAUSIBLE_CHECK)} {check}")
        for column in plan.identity_columns:
            # TRUNCATE kept the sequence going: the copy's own sequence numbers on from the live one's.
            cursor.execute(
                "SELECT pg_get_serial_sequence(%s, %s), pg_get_serial_sequence(%s, %s)",
                [plan.live, column, plan.staging, column],
            )
            live_sequence, staging_sequence = cursor.fetchone()  # already quoted and qualified
            cursor.execute(f"SELECT setval(%s, last_value, is_called) FROM {live_sequence}", [staging_sequence])


def use_staging_names(*, plan: StagingPlan) -> None:
    """For the rest of the caller's transaction the loaders' unqualified table name means the staging copy."""
    with connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL search_path TO {_qn(STAGING_SCHEMA)}, {_qn(plan.live_schema)}")


def empty_staging_table(*, plan: StagingPlan) -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"TRUNCATE {plan.staging}")


def analyze_staging_table(*, plan: StagingPlan) -> None:
    """Statistics for the new table before it goes live (TRUNCATE kept the old ones; a new table has none).

    Run in the load transaction: ANALYZE's lock conflicts with CREATE INDEX's, so it cannot run
    beside the builds, and the sampled pages are still in the cache here.
    """
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {plan.staging}")


def drop_staging_table(*, plan: StagingPlan) -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {plan.staging}")


def build_indexes(*, plan: StagingPlan, on_done: Callable[[str], None] = lambda _name: None) -> dict[str, float]:
    """Build every index of the committed staging table at once, one connection each.

    Returns the seconds of each build. On the first failure the other builds
    are cancelled and the error is raised (a duplicate key as :class:`DuplicateKey`).
    """
    jobs = [(job.name, job.create_sql) for job in plan.jobs]
    seconds: dict[str, float] = {}
    backends: dict[str, int] = {}
    abort = threading.Event()
    lock = threading.Lock()

    def run(name: str, sql: str) -> None:
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                with lock:
                    if abort.is_set():
                        return
                    backends[name] = cursor.fetchone()[0]
                started = time.perf_counter()
                try:
                    cursor.execute(sql)
                except Exception as exc:
                    if (duplicate := duplicate_key_from(exc)) is not None:
                        raise duplicate from None
                    raise
                seconds[name] = time.perf_counter() - started
                on_done(name)
        finally:
            connections.close_all()  # this thread's own connection

    with ThreadPoolExecutor(max_workers=min(len(jobs), MAX_PARALLEL_BUILDS), thread_name_prefix="index") as pool:
        futures = [pool.submit(run, name, sql) for name, sql in jobs]
        try:
            done, _ = wait(futures, return_when=FIRST_EXCEPTION)
            failed = next((f for f in futures if f in done and f.exception() is not None), None)
            if failed is not None:
                raise failed.exception()
        except BaseException:
            _cancel(abort=abort, lock=lock, backends=backends, futures=futures)
            raise
    return seconds


def _cancel(*, abort: threading.Event, lock: threading.Lock, backends: dict[str, int], futures: list) -> None:
    """Stop the builds still running (their work is thrown away with the staging table)."""
    with lock:
        abort.set()
        pids = list(backends.values())
    for future in futures:
        future.cancel()
    with connection.cursor() as cursor:
        for pid in pids:
            cursor.execute("SELECT pg_cancel_backend(%s)", [pid])


def swap_in(*, plan: StagingPlan) -> None:
    """One transaction: keys attached, the import's own check dropped, live table replaced by the staging one."""
    with transaction.atomic(), connection.cursor() as cursor:
        # Taken first and explicitly: readers finish their statements, new ones wait for the commit.
        cursor.execute(f"LOCK TABLE {plan.live} IN ACCESS EXCLUSIVE MODE")
        for job in plan.jobs:
            if job.constraint:
                name = _qn(job.name)
                cursor.execute(f"ALTER TABLE {plan.staging} ADD CONSTRAINT {name} {job.constraint} USING INDEX {name}")
        cursor.execute(f"ALTER TABLE {plan.staging} DROP CONSTRAINT IF EXISTS {_qn(PLAUSIBLE_CHECK)}")
        cursor.execute(f"DROP TABLE {plan.live}")
        cursor.execute(f"ALTER TABLE {plan.staging} SET SCHEMA {_qn(plan.live_schema)}")
