"""What one usage record cost, in USD: from the price snapshot bundled with the `genai-prices` package, or
from a user's price table (`--prices FILE`, schemas/prices.v1.schema.json), which overrides it.

Format-neutral: a record is its provider, model, token counts and time. Nothing here touches the network:
genai-prices is only asked for its bundled snapshot (never `UpdatePrices`), and the user table is a file.

Rules (docs/warehouse.md, "usage"):

- `input` (uncached), `output`, `cache_read` and cache writes are priced per million tokens. Cache writes
  are split into 5-minute and 1-hour writes where the log records the split; without a split every cache
  write is a 5-minute write. When the split records more than `cache_write` (a logging bug one format's
  writer had) the split is priced.
- A record is priced at the prices in force at its time (UTC); one without a time at the load's moment.
- A record whose model is unknown (or not recorded) has no cost, and a note says why.
- The user table first: an entry for the record's exact model id before one for a prefix of it (the longest
  prefix first), an entry naming the record's provider before one naming none, and only an entry whose
  period covers the record's time. A record it has no entry for is priced from the bundled snapshot.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path
from typing import Any, Final

from sessaudit.resources import schema_validator
from sessaudit.strictjson import LineProblem, loads_strict
from sessaudit.userfiles import UserFileError, schema_problems

SCHEMA_FILE: Final = "prices.v1.schema.json"
PRICES_SCHEMA_ID: Final = "sessaudit/prices/v1"
PACKAGE: Final = "genai-prices"
QUANTUM: Final = Decimal("0.000000001")  # costs are rounded to a billionth of a dollar (half to even)
MILLION: Final = Decimal(1_000_000)
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
PRICE_KEYS: Final = ("input", "output", "cache_read", "cache_write_5m", "cache_write_1h")


class PricesFileError(UserFileError):
    """A `--prices` file that cannot be read or is not a valid price table."""


@dataclass(frozen=True, slots=True)
class Counts:
    """One usage record as priced: token counts in the warehouse's meaning (`input` uncached), the cache
    writes' 5-minute/1-hour split when the log records one (else None), the time in epoch µs (UTC)."""

    provider: str | None
    model: str | None
    input: int
    output: int
    cache_read: int
    cache_write: int
    cache_write_5m: int | None = None
    cache_write_1h: int | None = None
    timestamp: int | None = None

    def writes(self) -> tuple[int, int]:
        """(5-minute, 1-hour) cache writes: without a split all are 5-minute; a split that says more than
        `cache_write` is believed."""
        hour = self.cache_write_1h or 0
        if self.cache_write_5m is None and self.cache_write_1h is None:
            return self.cache_write, 0
        total = max(self.cache_write, (self.cache_write_5m or 0) + hour)
        return total - hour, hour


@dataclass(frozen=True, slots=True)
class Cost:
    """A record's cost (None when unknown), where its prices came from, and why there is no cost."""

    usd: Decimal | None
    source: str | None
    note: str | None = None
    # the first day the prices used apply (a dated price period of the snapshot, a table entry's `from`);
    # None: prices without a start date
    since: date | None = None


@dataclass(frozen=True, slots=True)
class Entry:
    """One row of a user price table: USD per million tokens (None: not given), for `model` exactly or for
    every model starting with `prefix`, from `start` (inclusive) to `end` (exclusive), epoch µs."""

    model: str | None
    prefix: str | None
    provider: str | None
    prices: dict[str, Decimal | None]
    start: int | None = None
    end: int | None = None
    pointer: str = ""

    def covers(self, moment: int) -> bool:
        return (self.start is None or self.start <= moment) and (self.end is None or moment < self.end)

    def matches(self, provider: str | None, model: str) -> bool:
        if self.provider is not None and self.provider != provider:
            return False
        return model == self.model if self.model is not None else model.startswith(self.prefix or "")

    def rank(self) -> tuple[int, int, int]:
        """Smaller first: exact id before prefix, longer prefix first, provider-specific first."""
        return (
            0 if self.model is not None else 1,
            -len(self.prefix or ""),
            0 if self.provider is not None else 1,
        )


@dataclass(frozen=True, slots=True)
class PriceTable:
    """A user's price table: its entries and the source string its costs carry."""

    source: str
    entries: tuple[Entry, ...]

    def find(self, provider: str | None, model: str, moment: int) -> Entry | None:
        found = [item for item in self.entries if item.matches(provider, model) and item.covers(moment)]
        return min(found, key=Entry.rank) if found else None

    def cost(self, entry: Entry, counts: Counts) -> Cost:
        five, hour = counts.writes()
        amounts = {
            "input": counts.input,
            "output": counts.output,
            "cache_read": counts.cache_read,
            "cache_write_5m": five,
            "cache_write_1h": hour,
        }
        total = Decimal(0)
        for key, tokens in amounts.items():
            if not tokens:
                continue
            price = entry.prices[key]
            if price is None:
                where = entry.pointer or "an entry"
                return Cost(None, None, f"{self.source}: {where} has no {key} price for {tokens} tokens")
            total += price * tokens
        since = moment_of(entry.start).date() if entry.start is not None else None
        return Cost(quantize(total / MILLION), self.source, since=since)


def quantize(value: Decimal) -> Decimal:
    return value.quantize(QUANTUM, rounding=ROUND_HALF_EVEN)


def moment_of(micros: int) -> datetime:
    return _EPOCH + timedelta(microseconds=micros)


def micros_of(moment: datetime) -> int:
    delta = moment.astimezone(UTC) - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


@dataclass(slots=True)
class Prices:
    """Prices usage records: the user `table` first, then the bundled genai-prices snapshot. `now` (epoch
    µs) is the moment a record without a time is priced at."""

    now: int
    table: PriceTable | None = None
    _bundled: _Bundled | None = field(default=None, init=False)

    def price(self, counts: Counts) -> Cost:
        if counts.model is None:
            return Cost(None, None, "no model recorded")
        moment = counts.timestamp if counts.timestamp is not None else self.now
        if self.table is not None:
            entry = self.table.find(counts.provider, counts.model, moment)
            if entry is not None:
                return self.table.cost(entry, counts)
        if self._bundled is None:
            self._bundled = _Bundled()
        return self._bundled.cost(counts, moment)


class _Bundled:
    """The genai-prices package's bundled snapshot (imported on first use: a fifth of a second)."""

    def __init__(self) -> None:
        import genai_prices
        from genai_prices import data_snapshot

        snapshot = data_snapshot.get_snapshot()
        if snapshot.from_auto_update:  # sessaudit never starts an update; someone else in this process did
            raise RuntimeError("genai-prices holds an auto-updated snapshot; sessaudit prices from its own")
        self.snapshot = snapshot
        self.usage = genai_prices.Usage
        self.source = bundled_source()
        # (provider, model) → (Provider, ModelInfo), or the note of one it does not know
        self.models: dict[tuple[str | None, str], Any] = {}
        self.known = data_snapshot.find_provider_by_id

    def _resolve(self, provider: str | None, model: str) -> Any:
        key = (provider, model)
        if key not in self.models:
            known = provider is not None and self.known(self.snapshot.providers, provider) is not None
            named = provider if known else None
            try:
                self.models[key] = self.snapshot.find_provider_model(model, None, named, None)
            except LookupError:
                where = f" for provider {provider}" if named is not None else ""
                self.models[key] = f"model {model!r} unknown to {self.source}{where}"
        return self.models[key]

    def cost(self, counts: Counts, moment: int) -> Cost:
        assert counts.model is not None
        found = self._resolve(counts.provider, counts.model)
        if isinstance(found, str):
            return Cost(None, None, found)
        provider, model = found
        five, hour = counts.writes()
        usage = self.usage(
            input_tokens=counts.input + counts.cache_read + five + hour,
            output_tokens=counts.output,
            cache_read_tokens=counts.cache_read,
            cache_write_tokens=five + hour,
            cache_write_1h_tokens=hour,
        )
        try:
            calculated = model.calc_price(usage, provider, genai_request_timestamp=moment_of(moment))
        except ValueError as error:  # e.g. a model priced by units other than tokens
            return Cost(None, None, f"{self.source} cannot price {counts.model!r}: {error}")
        return Cost(
            quantize(calculated.total_price), self.source, since=_start_of(model, calculated.model_price)
        )


def _start_of(model: Any, used: Any) -> date | None:
    """The start date of the snapshot's dated price period whose prices were used (None: undated)."""
    periods = model.prices if isinstance(model.prices, list) else []
    for period in periods:
        start = getattr(period.constraint, "start_date", None)
        if period.prices is used and isinstance(start, date):
            return start
    return None


def bundled_source() -> str:
    """`genai-prices <version> (data sha256:<12 hex>)`: the package publishes no date for its snapshot, so
    the snapshot is named by its version and the digest of its data module."""
    import genai_prices
    from genai_prices import data

    digest = hashlib.sha256(Path(data.__file__).read_bytes()).hexdigest()[:12]
    return f"{PACKAGE} {genai_prices.__version__} (data sha256:{digest})"


# --- the user's price table -----------------------------------------------------------------------------


def load_price_table(path: Path) -> PriceTable:
    """Read, parse (strict JSON) and validate a `--prices` file; raise PricesFileError (every problem)."""
    name = str(path)
    try:
        raw = path.read_bytes()
    except OSError as problem:
        raise PricesFileError(name, "", f"cannot be read: {problem.strerror or problem}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as problem:
        raise PricesFileError(name, "", f"is not UTF-8 (byte {problem.start})") from None
    try:
        document = loads_strict(text)
    except LineProblem as problem:
        where = f" at character {problem.column}" if problem.column is not None else ""
        raise PricesFileError(name, problem.pointer or "", f"is not JSON{where}: {problem.message}") from None
    source = f"{path.name} sha256:{hashlib.sha256(raw).hexdigest()}"
    return parse_price_table(document, name=name, source=source)


def parse_price_table(document: Any, *, name: str = "<prices>", source: str = "<prices>") -> PriceTable:
    errors = list(schema_validator(SCHEMA_FILE).iter_errors(document))
    if errors:
        raise PricesFileError.of(name, schema_problems(errors))
    entries: list[Entry] = []
    problems: list[tuple[str, str]] = []
    for index, item in enumerate(document["models"]):
        pointer = f"/models/{index}"
        start = _instant(item.get("from"), f"{pointer}/from", problems)
        end = _instant(item.get("until"), f"{pointer}/until", problems)
        if start is not None and end is not None and end <= start:
            problems.append((f"{pointer}/until", "is not after `from`"))
        prices = {key: _decimal(item[key]) if key in item else None for key in PRICE_KEYS}
        problems += [
            (f"{pointer}/{key}", "is not a finite number")
            for key, value in prices.items()
            if value is not None and not value.is_finite()
        ]
        entries.append(
            Entry(
                item.get("model"), item.get("model_prefix"), item.get("provider"), prices, start, end, pointer
            )
        )
    problems += _overlaps(entries)
    if problems:
        raise PricesFileError.of(name, problems)
    return PriceTable(source, tuple(entries))


def _decimal(value: int | float) -> Decimal:
    return Decimal(value) if isinstance(value, int) else Decimal(repr(value))


def _instant(value: str | None, pointer: str, problems: list[tuple[str, str]]) -> int | None:
    """A `from`/`until` value (a date: its midnight UTC; or a date-time with a zone) as epoch µs."""
    if value is None:
        return None
    try:
        moment = (
            datetime.combine(date.fromisoformat(value), datetime.min.time(), UTC)
            if len(value) == 10
            else datetime.fromisoformat(value)
        )
    except ValueError:
        problems.append((pointer, f"{value!r} is not a date (YYYY-MM-DD) or a date-time with a zone"))
        return None
    if moment.tzinfo is None:
        problems.append((pointer, f"{value!r} has no time zone (write Z for UTC)"))
        return None
    return micros_of(moment)


def _overlaps(entries: list[Entry]) -> list[tuple[str, str]]:
    """Two entries for the same model (or prefix) and provider whose periods overlap: which one applies
    would be a guess."""
    problems = []
    for index, first in enumerate(entries):
        for second in entries[index + 1 :]:
            key = (first.model, first.prefix, first.provider)
            if key == (second.model, second.prefix, second.provider) and _overlap(first, second):
                problems.append((second.pointer, f"its period overlaps that of {first.pointer} (same model)"))
    return problems


def _overlap(first: Entry, second: Entry) -> bool:
    lowest, highest = -(1 << 62), 1 << 62
    low = max(lowest if item.start is None else item.start for item in (first, second))
    high = min(highest if item.end is None else item.end for item in (first, second))
    return low < high
