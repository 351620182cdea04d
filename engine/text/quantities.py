"""Amounts: a number with its unit, read as one quantity, so that a reply that gives a criterion's amount
in other words is read in the criterion's own: "4 g" for "4 grams", "a fortnight" or "two weeks" for "14
days", "half a litre" for "500 ml", "an hour and a half" or "1 hour 30 minutes" for "90 minutes", "4200
grams" for "4.2 kg", "8 °C" for "8 degrees Celsius", "£2,500" for "2,500 pounds", "$5m" for "5 million
dollars". The first end of a range whose unit is said once, after the second ("2 to 2.4 inches", "5-6 cm",
"between 1 and 5 mg"), is an amount in that unit.

:func:`amounts` finds a text's amounts (each with its span, its dimension and its size in the dimension's
smallest unit); :func:`restate` rewrites a reply so that each amount *equal* to one of the claims' amounts
reads as the claim wrote it. Only equal amounts are rewritten: "3 weeks" against "14 days" stays "3
weeks", so a wrong amount stays wrong, and a bare number ("14", the reply to "how many days?") is left as
it is. The judges restate a reply before they read it (:mod:`engine.judge.freetext`), so every rule after
(numbers, recall, cosine) sees one wording; the verdict names the rewriting.

The units (:data:`LADDERS`): time (millisecond, second, minute, hour, day, week, fortnight), the calendar (month, year:
a month is no fixed number of days, so months and days are never equal; a decade is ten years), mass (microgram ... tonne),
length (millimetre ... kilometre), volume (millilitre, litre), frequency (hertz ... gigahertz), temperature in Celsius (°C, ℃, "degrees
Celsius", "degrees C", "degrees" alone) and in Fahrenheit, speed (:data:`SPEEDS`: "mph", "km/h", "m/s", knots, "metres per
second"), and money in pounds, dollars and euros (a
symbol, an ISO code (GBP, USD, EUR) or a name; "m", "bn", "k" after a symbol). Not amounts: a bare "m" or "s" (million, metres;
"1990s"), a unit with no number ("for days"), "a day" in a rate ("two tablets a day", "twice a week"),
and "a" before a unit other than time ("a meter" is also a device) or before "second" ("a second opinion").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from engine.text.numbers import read_number
from engine.text.tokens import stem, tokens

LADDERS: dict[str, tuple[tuple[str, int], ...]] = {
    "time": (("millisecond", 1), ("second", 1_000), ("minute", 60_000), ("hour", 3_600_000), ("day", 86_400_000),
             ("week", 604_800_000)),
    "calendar": (("month", 1), ("year", 12)),
    "mass": (("microgram", 1), ("milligram", 1_000), ("gram", 10**6), ("kilogram", 10**9), ("tonne", 10**12)),
    "length": (("millimetre", 1), ("centimetre", 10), ("metre", 1_000), ("kilometre", 10**6)),
    "volume": (("millilitre", 1), ("litre", 1_000)),
    "frequency": (("hertz", 1), ("kilohertz", 1_000), ("megahertz", 10**6), ("gigahertz", 10**9)),
    "current": (("milliampere", 1), ("ampere", 1_000)),
    "pressure": (("pascal", 1), ("hectopascal", 100), ("kilopascal", 1_000), ("bar", 100_000), ("megapascal", 10**6)),
    "voltage": (("volt", 1), ("kilovolt", 1_000)),
    "power": (("watt", 1), ("kilowatt", 1_000)),
    "amount": (("millimole", 1), ("mole", 1_000)),
    "dose": (("microsievert", 1), ("millisievert", 1_000), ("sievert", 10**6)),
}
"""Each dimension's units, smallest first, with their size in the smallest unit."""

_SPELLINGS = {
    "millisecond": "millisecond milliseconds ms msec msecs", "second": "second seconds sec secs", "minute": "minute minutes min mins", "hour": "hour hours hr hrs",
    "day": "day days", "week": "week weeks wk wks", "month": "month months mo mos", "year": "year years yr yrs",
    "microgram": "microgram micrograms mcg μg µg ug", "milligram": "milligram milligrams mg mgs",
    "gram": "gram grams gramme grammes", "kilogram": "kilogram kilograms kilogramme kilogrammes kilo kilos kg kgs",
    "tonne": "tonne tonnes", "millimetre": "millimetre millimetres millimeter millimeters mm",
    "centimetre": "centimetre centimetres centimeter centimeters cm",
    "metre": "metre metres meter meters", "kilometre": "kilometre kilometres kilometer kilometers km kms",
    "millilitre": "millilitre millilitres milliliter milliliters ml mls cm3 cc",
    "litre": "litre litres liter liters dm3", "hertz": "hertz hz", "millimole": "millimole millimoles mmol", "mole": "mole moles mol", "kilohertz": "kilohertz khz",
    "megahertz": "megahertz mhz", "gigahertz": "gigahertz ghz", "milliampere": "milliampere milliamperes milliamp milliamps ma",
    "ampere": "ampere amperes amp amps", "pascal": "pascal pascals pa", "hectopascal": "hectopascal hectopascals hpa",
    "kilopascal": "kilopascal kilopascals kpa", "bar": "bar bars",
    "inch": "inch inches", "foot": "foot feet ft", "yard": "yard yards yd yds", "mile": "mile miles",
    "bit": "bit bits", "byte": "byte bytes", "volt": "volt volts", "kilovolt": "kilovolt kilovolts kv",
    "megapascal": "megapascal megapascals mpa", "psi": "psi", "ksi": "ksi", "watt": "watt watts",
    "kilowatt": "kilowatt kilowatts kw", "decibel": "decibel decibels db dba", "mmhg": "mmhg", "inhg": "inhg",
    "rem": "rem", "millirem": "millirem mrem",
    "microsievert": "microsievert microsieverts µsv μsv usv", "millisievert": "millisievert millisieverts msv",
    "sievert": "sievert sieverts sv"}
_SIZE = {name: (dim, size) for dim, ladder in LADDERS.items() for name, size in ladder}
# imperial lengths in millimetres (exact by definition; not on a ladder: never a step of "1 foot 6 inches"'s
# kind is summed with metric units), bits and bytes ("16 bytes" is "128 bits"), pounds and kilopounds per square
# inch (psi, ksi); "in" is no inch (a
# preposition) and "pound" no mass (a currency too)
_SIZE.update({"inch": ("length", Fraction(127, 5)), "foot": ("length", Fraction(1524, 5)),
              "yard": ("length", Fraction(4572, 5)), "mile": ("length", Fraction(1_609_344)),
              "bit": ("data", Fraction(1)), "byte": ("data", Fraction(8)), "decibel": ("sound level", Fraction(1)),
              "psi": ("pressure", Fraction("6894.757293168")), "ksi": ("pressure", Fraction("6894757.293168")),
              # millimetres and inches of mercury (conventional, in pascals); the rem (0.01 Sv) of older texts
              "mmhg": ("pressure", Fraction("133.322387415")), "inhg": ("pressure", Fraction("3386.389")),
              "rem": ("dose", Fraction(10_000)), "millirem": ("dose", Fraction(10))})
UNITS: dict[str, tuple[str, Fraction]] = {
    w: (_SIZE[name][0], Fraction(_SIZE[name][1])) for name, words in _SPELLINGS.items() for w in words.split()}
"""A unit's spellings and abbreviations -> (dimension, size in the dimension's smallest unit)."""
UNITS.update({"millibar": ("pressure", Fraction(100)), "millibars": ("pressure", Fraction(100)),
              "mbar": ("pressure", Fraction(100)), "fortnight": ("time", Fraction(1_209_600_000)), "fortnights": ("time", Fraction(1_209_600_000)),
              "decade": ("calendar", Fraction(120)), "decades": ("calendar", Fraction(120)),
              "pound": ("pound", Fraction(1)), "pounds": ("pound", Fraction(1)), "dollar": ("dollar", Fraction(1)),
              "dollars": ("dollar", Fraction(1)), "euro": ("euro", Fraction(1)), "euros": ("euro", Fraction(1)),
              "gbp": ("pound", Fraction(1)), "usd": ("dollar", Fraction(1)), "eur": ("euro", Fraction(1)),
              "celsius": ("celsius", Fraction(1)), "centigrade": ("celsius", Fraction(1)),
              "fahrenheit": ("fahrenheit", Fraction(1))})
_SPEED_MM_PER_HOUR = Fraction(3_600_000)  # one metre per second
SPEEDS: dict[str, Fraction] = {
    "mph": Fraction(1_609_344), "kph": Fraction(10**6), "kmh": Fraction(10**6), "km/h": Fraction(10**6),
    "kmph": Fraction(10**6), "knot": Fraction(1_852_000), "knots": Fraction(1_852_000), "kn": Fraction(1_852_000),
    "kt": Fraction(1_852_000), "kts": Fraction(1_852_000), "m/s": _SPEED_MM_PER_HOUR, "ms-1": _SPEED_MM_PER_HOUR,
    "m/min": Fraction(60_000), "ft/s": Fraction(1_097_280), "fps": Fraction(1_097_280), "mi/h": Fraction(1_609_344),
    "cm/s": Fraction(36_000)}
"""Speeds, in millimetres an hour: their abbreviations ("mph", "km/h", "m/s", "knots"); a length "per" a time unit
("metres per second", "miles an hour") is read as a speed too."""
UNITS.update({w: ("speed", size) for w, size in SPEEDS.items()})
AREAS: dict[str, Fraction] = {"mm²": Fraction(1), "cm²": Fraction(100), "m²": Fraction(10**6), "km²": Fraction(10**12),
                              "ft²": Fraction(1524, 5) ** 2, "hectare": Fraction(10**10), "hectares": Fraction(10**10),
                              "ha": Fraction(10**10), "acre": Fraction("4046.8564224") * 10**6,
                              "acres": Fraction("4046.8564224") * 10**6}
"""Areas, in square millimetres: their symbols ("m²"), hectares and acres; "square" or "sq" before a length unit ("square
metres", "sq ft") is read as an area too."""
UNITS.update({w: ("area", size) for w, size in AREAS.items()})
_AFTER_A_NUMBER = {"g": "gram", "h": "hour", "l": "litre", "·amp": "ampere", "v": "volt"}
"""Units of one letter, units only right after a number ("4 g", "24 h", "2 l"; a capital "A" after a number and a
space, "32 A", is amperes, read so by :func:`_words`)."""
_SYMBOLS = {"£": "pound", "$": "dollar", "€": "euro", "gbp": "pound", "usd": "dollar", "eur": "euro"}
"""Before a number: a currency's symbol or its ISO code ("EUR 85,000")."""
_SCALES = {"m": 10**6, "bn": 10**9, "k": 10**3, "million": 10**6, "billion": 10**9, "thousand": 10**3}
_BEFORE_AN_AMOUNT = frozenset("""within for in after before about around over under than of to from by until till
take takes took taken taking last lasts lasted lasting need needs needed wait waits waited spend spends spent give
given gave allow allows allowed have has had get gets got only just least most nearly almost roughly approximately barely less more another
is are was were be been being""".split())
"""The words after which "a day", "an hour" is an amount ("within a week", "lasts a day", "at least an hour");
after any other ("tablets a day", "twice a week") it is a rate, and a text or a sentence may open with one."""
_WORD = re.compile(r"[£$€°℃]|\d+(?:[.,]\d+)*|[^\W\d_]+(?:['’][^\W\d_]+)*")
_THOUSANDS = re.compile(r"^\d{1,3}(?:,\d{3})+(?:\.\d+)?$")


@dataclass(frozen=True)
class Amount:
    """An amount found in a text: ``text[start:end]``, its dimension and its size in the smallest unit."""

    start: int
    end: int
    dim: str
    size: Fraction


@dataclass
class _Words:
    spans: list[tuple[int, int]]
    low: list[str]


_SPEED_TOKEN = re.compile(r"(?:km|cm|m|ft|mi)/(?:h|s|min)\b|ms-1\b", re.IGNORECASE)


def _words(text: str) -> _Words:
    spans, low = [], []
    taken = -1
    for m in _WORD.finditer(text):
        if m.start() < taken:
            continue  # inside a speed's abbreviation ("km/h") read whole
        speed = _SPEED_TOKEN.match(text, m.start()) if m.group(0)[:1].isalpha() else None
        if speed and speed.group(0).lower() in SPEEDS:
            spans.append((m.start(), speed.end()))
            low.append(speed.group(0).lower())
            taken = speed.end()
            continue
        w = m.group(0).lower().replace("’", "'")
        spans.append((m.start(), m.end()))
        low.append("·amp" if m.group(0) == "A" and m.start() and text[m.start() - 1] in " \u00a0" and
                   re.search(r"\d\s$", text[:m.start()]) else (w[:-2] if w.endswith("'s") else w))
    return _Words(spans, low)


def _number(low: list[str], i: int) -> tuple[Fraction, int] | None:
    """The number at ``i`` (digits, or words: "twenty-one"), with a scale word after digits ("1.5 million")."""
    w = low[i]
    if w[:1].isdigit():
        if "," in w and not _THOUSANDS.match(w):
            return None  # "1,2" is a list
        try:
            value = Fraction(w.replace(",", ""))
        except (ValueError, ZeroDivisionError):
            return None
        if i + 1 < len(low) and low[i + 1] in ("million", "billion", "thousand"):
            return value * _SCALES[low[i + 1]], i + 2
        return value, i + 1
    run = read_number(low, i)
    if run is None or run[2]:
        return None
    return Fraction(run[0]), run[1]


_KIND_OF_TIME = frozenset("working calendar business clear full consecutive whole complete school".split())
"""A word between a number and its unit of time that says which kind it counts ("3 working days", "28 calendar
days"): the amount is read through it; working, business and school time is a dimension of its own ("72 hours" is
no "3 working days"), the other kinds plain time ("28 calendar days" is 4 weeks)."""
_WORKING_TIME = frozenset("working business school".split())


def _unit(low: list[str], i: int) -> tuple[str, Fraction, int] | None:
    """The unit right after a number, at ``i``: (dimension, size, index after it)."""
    if i + 1 < len(low) and low[i] in _KIND_OF_TIME and UNITS.get(low[i + 1], ("",))[0] in ("time", "calendar"):
        dim, size = UNITS[low[i + 1]]  # "3 working days": days, of a kind
        return (f"working {dim}" if low[i] in _WORKING_TIME else dim), size, i + 2
    if i >= len(low):
        return None
    w = _AFTER_A_NUMBER.get(low[i], low[i])
    if w == "°" and i + 1 < len(low) and low[i + 1] in ("c", "f"):
        return ("celsius" if low[i + 1] == "c" else "fahrenheit"), Fraction(1), i + 2
    if w == "℃":
        return "celsius", Fraction(1), i + 1
    if w in ("degree", "degrees"):
        nxt = low[i + 1] if i + 1 < len(low) else ""
        if nxt in ("fahrenheit", "f"):
            return "fahrenheit", Fraction(1), i + 2
        return "celsius", Fraction(1), i + (2 if nxt in ("celsius", "centigrade", "c") else 1)
    if w in ("square", "sq") and i + 1 < len(low) and UNITS.get(low[i + 1], ("",))[0] == "length":
        return "area", UNITS[low[i + 1]][1] ** 2, i + 2  # "2.5 square metres", "40 sq ft"
    if w in UNITS:
        dim, size = UNITS[w]
        if dim == "length" and i + 2 < len(low):  # "metres per second", "miles an hour": a speed
            per, then = low[i + 1], low[i + 2]
            if (per == "per" and UNITS.get(then, ("",))[0] == "time") or (per in ("a", "an") and then == "hour"):
                return "speed", size * 3_600_000 / UNITS[then][1], i + 3
        return dim, size, i + 1
    return None


_PARTS = {"quarter": Fraction(1, 4), "quarters": Fraction(1, 4), "third": Fraction(1, 3), "thirds": Fraction(1, 3)}
"""Fractions said as parts of one unit ("three quarters of an hour")."""


def _half(low: list[str], i: int) -> tuple[Fraction, int]:
    """"and a half" / "and a quarter" at ``i``: (its value, the index after it), else (0, i)."""
    if low[i:i + 2] == ["and", "a"] and i + 2 < len(low) and low[i + 2] in ("half", "quarter"):
        return (Fraction(1, 2) if low[i + 2] == "half" else Fraction(1, 4)), i + 3
    return Fraction(0), i


def _read(low: list[str], i: int) -> tuple[str, Fraction, int] | None:
    """The amount that starts at ``i``: (dimension, size in the smallest unit, index after it), or None."""
    w = low[i]
    if w in _SYMBOLS:  # "£2,500", "$5m"
        n = _number(low, i + 1) if i + 1 < len(low) else None
        if n is None:
            return None
        value, j = n
        if j < len(low) and low[j] in ("m", "bn", "k") and low[j - 1][:1].isdigit():
            value, j = value * _SCALES[low[j]], j + 1
        return _SYMBOLS[w], value, j
    n = _number(low, i)
    if n is not None:  # "4 g", "1.5 hours", "1 and a half hours", "twenty-one days"
        extra, j = _half(low, n[1])
        if not extra and low[j:j + 1] and low[j] in _PARTS and low[j + 1:j + 2] == ["of"] and low[j + 2:j + 3] in (
                ["a"], ["an"]) and (unit := _unit(low, j + 3)):  # "three quarters of an hour", "two thirds of a day"
            return unit[0], n[0] * _PARTS[low[j]] * unit[1], unit[2]
        unit = _unit(low, j)
        if unit is None:
            return None
        return unit[0], (n[0] + extra) * unit[1], unit[2]
    if w not in ("a", "an", "half", "quarter"):
        return None
    share, j = Fraction(1), i
    if w in ("a", "an") and j + 1 < len(low) and low[j + 1] in ("half", "quarter"):
        j += 1  # "a quarter of an hour"
    if low[j] in ("half", "quarter"):
        share = Fraction(1, 2) if low[j] == "half" else Fraction(1, 4)
        j += 1
        if j < len(low) and low[j] == "of":
            j += 1
        if j >= len(low) or low[j] not in ("a", "an"):
            return None
    elif i > 0 and low[i - 1] not in _BEFORE_AN_AMOUNT:
        return None  # "two tablets a day", "twice a week", "marathons a day": a rate
    unit = UNITS.get(low[j + 1]) if j + 1 < len(low) else None
    if unit is None or (share == 1 and (unit[0] not in ("time", "calendar") or low[j + 1] == "second")):
        return None
    extra, k = _half(low, j + 2) if share == 1 else (Fraction(0), j + 2)
    return unit[0], (share + extra) * unit[1], k


_JOINED = re.compile(r"^\s*(?:and\s+)?$")
_DASH = re.compile(r"^\s*[-–—]\s*$")


def _range_start(text: str, words: _Words, i: int) -> tuple[str, Fraction, int] | None:
    """The first end of a range whose unit is said once, after its second ("2 to 2.4 inches", "5-6 cm",
    "between 1 and 5 mg"): the number at ``i`` in the second end's unit, else None."""
    low = words.low
    n = _number(low, i)
    if n is None or n[1] >= len(low):
        return None
    j = n[1]
    if low[j] == "to" or (low[j] == "and" and i > 0 and low[i - 1] == "between"):
        k = j + 1
    elif _DASH.match(text[words.spans[j - 1][1]:words.spans[j][0]]):
        k = j
    else:
        return None
    second = _number(low, k) if k < len(low) else None
    if second is None:
        return None
    extra, after = _half(low, second[1])
    unit = _unit(low, after)
    if unit is None:
        return None
    return unit[0], n[0] * unit[1], j


def amounts(text: str) -> list[Amount]:
    """The amounts of a text, in order; "1 hour 30 minutes" and "2 years and 6 months" are one each."""
    words = _words(text or "")
    low, out, i = words.low, [], 0
    while i < len(low):
        read = _read(low, i)
        first_end = read is None and (read := _range_start(text, words, i)) is not None
        if read is None:
            i += 1
            continue
        dim, size, j = read
        while j < len(low) and not first_end:
            last_unit = UNITS.get(_AFTER_A_NUMBER.get(low[j - 1], low[j - 1]))  # "1 hour 30 minutes", "2 years and 6 months": one amount
            k = j + 1 if low[j] == "and" else j
            more = _read(low, k) if k < len(low) and low[k][:1].isdigit() else None
            between = text[words.spans[j - 1][1]:words.spans[k][0]] if k < len(low) else ""
            if more is None or more[0] != dim or dim not in LADDERS or not _JOINED.match(between):
                break  # "1,435 mm (4 ft 8½ in)": another amount in brackets, not a part of this one
            if last_unit is not None and more[1] >= last_unit[1]:
                break  # "90 days and 180 days": two amounts; a part is in a smaller unit ("1 hour 30 minutes")
            size, j = size + more[1], more[2]
        out.append(Amount(words.spans[i][0], words.spans[j - 1][1], dim, size))
        i = j
    return out


def _stems(text: str) -> list[str]:
    return [stem(w) for w in tokens(text)]  # numbers folded: "seven years" is "7 years" already


def restate(reply: str, claims: Sequence[str]) -> tuple[str, tuple[tuple[str, str], ...]]:
    """``reply`` with each amount equal to one of ``claims``' amounts written as that claim writes it, and
    the rewritings made ((the reply's words, the claim's), in order). Amounts the claims do not hold, and
    amounts already in a claim's words, are left as they are."""
    wanted: dict[tuple[str, Fraction], str] = {}
    for claim in claims:
        for a in amounts(claim):
            wanted.setdefault((a.dim, a.size), claim[a.start:a.end])
    if not reply:
        return reply, ()
    if not wanted:
        reply, changes = _numeric_dates(reply, claims)
        reply, written = _clock_times(reply, claims)
        reply, often = _frequencies(reply, claims)
        return reply, tuple(changes + written + often)
    held = [(a, claim[a.start:a.end]) for claim in claims for a in amounts(claim)]
    parts, changes, pos = [], [], 0
    for a in amounts(reply):
        said = reply[a.start:a.end]
        words = wanted.get((a.dim, a.size))
        if words is not None and _lead_number(words) != _lead_number(said):
            # a claim that states the amount twice ("One hectare is 10,000 square metres"): the words in the reply's unit
            words = next((claim[c.start:c.end] for claim in claims for c in amounts(claim) if (c.dim, c.size) == (a.dim, a.size)
                          and _lead_number(claim[c.start:c.end]) == _lead_number(said)), words)
        if words is None:
            words = next((w for c, w in held if same_amount(c, a, said)), None)
        if words is not None and re.fullmatch(r"\d[\d,]*(?:\.\d+)?", said):
            number = re.match(r"\d[\d,]*(?:\.\d+)?", words)  # a range's first end: its number alone ("5 to 6 cm")
            words = number.group(0) if number else words
        if words is None or _stems(words) == _stems(said):
            continue  # not the claim's, or its words already ("38 year" for "38 years")
        if words[:1].isupper() and not words[:2].isupper() and a.start > 0 and not reply[:a.start].rstrip().endswith(
                (".", "!", "?", ":")):
            words = words[0].lower() + words[1:]  # "Seven days" from a claim's start, inside a sentence
        parts += [reply[pos:a.start], words]
        pos = a.end
        changes.append((said, words))
    if changes:
        reply = "".join(parts) + reply[pos:]
    reply, written = _numeric_dates(reply, claims)
    changes += written
    reply, written = _clock_times(reply, claims)
    changes += written
    reply, written = _frequencies(reply, claims)
    changes += written
    if not changes:
        return reply, ()
    return reply, tuple(changes)


_FREQ_NUMBER = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
                "ten": 10, "eleven": 11, "twelve": 12, "fourteen": 14, "eighteen": 18, "twenty-four": 24, "thirty": 30}
_FREQ_UNIT = {"minute": ("minute", 1), "hour": ("minute", 60), "day": ("day", 1), "week": ("day", 7),
              "fortnight": ("day", 14), "month": ("month", 1), "quarter": ("month", 3), "year": ("month", 12)}
_FREQ_ADVERB = {"hourly": ("minute", 60), "daily": ("day", 1), "nightly": ("day", 1), "weekly": ("day", 7),
                "fortnightly": ("day", 14), "monthly": ("month", 1), "quarterly": ("month", 3), "annually": ("month", 12),
                "yearly": ("month", 12), "half-yearly": ("month", 6), "six-monthly": ("month", 6),
                "semi-annually": ("month", 6)}
_N = r"(?:\d+(?:\.\d+)?|" + "|".join(sorted(_FREQ_NUMBER, key=len, reverse=True)) + ")"
_FREQUENCY = re.compile(
    rf"\b(?:(?:(?P<k>once|twice|{_N}\s+times)\s+)?(?P<adverb>{'|'.join(sorted(_FREQ_ADVERB, key=len, reverse=True))})"
    r"(?!\s+(?:personal\s+|effective\s+)?(?:doses?|limits?|allowances?|max(?:imum)?|totals?|amounts?|intakes?|exposures?|"
    r"averages?|driving|rest|rates?|caps?|quotas?|budgets?|volumes?|output|turnover|income|salary|wages?|pay|rent)\b)"
    rf"|every\s+(?P<other>other\s+|second\s+)?(?:(?P<n>{_N})\s+)?(?P<unit>minute|hour|day|week|fortnight|month|quarter|year)s?"
    rf"|(?P<times>once|twice|{_N}\s+times)\s+(?:a|an|per|each|every)\s+(?P<per>minute|hour|day|week|fortnight|month|quarter|year))\b",
    re.IGNORECASE)
"""How often something happens: "weekly", "every 7 days", "every three months", "every other week", "once a week",
"twice a day", "3 times per year"; not an amount per period ("daily dose", "weekly limit", "9 hours daily")."""


def frequencies(text: str) -> list[tuple[int, int, tuple[str, Fraction]]]:
    """The frequencies a text says, as (start, end, (dimension, period)): the time between two occurrences in minutes,
    days or months ("weekly", "every 7 days" and "once a week" are ("day", 7); "twice a day" ("day", 1/2); "quarterly"
    and "every 3 months" ("month", 3)). Days and months are not compared (a month is no fixed number of days)."""
    out = []
    for m in _FREQUENCY.finditer(text or ""):
        if m.group("adverb"):  # "weekly", "twice yearly"; not an amount's "9 hours daily", "4 g daily"
            if not m.group("k") and re.search(r"\d[\d.,]*\s*[^\W\d_]*\.?\s*$", text[:m.start()]):
                continue
            dim, size = _FREQ_ADVERB[m.group("adverb").lower()]
            k = _times(m.group("k") or "once")
            if k:
                out.append((m.start(), m.end(), (dim, Fraction(size) / k)))
            continue
        if m.group("unit"):
            dim, size = _FREQ_UNIT[m.group("unit").lower()]
            n = m.group("n")
            count = Fraction(_FREQ_NUMBER.get(n.lower(), 0) if n and not n[0].isdigit() else (n or "1"))
            if m.group("other"):
                count *= 2
            out.append((m.start(), m.end(), (dim, count * size)))
            continue
        dim, size = _FREQ_UNIT[m.group("per").lower()]
        k = _times(m.group("times"))
        if k:
            out.append((m.start(), m.end(), (dim, Fraction(size) / k)))
    return out


def _times(said: str) -> Fraction:
    """How many times "once", "twice", "3 times" or "three times" says (0 for a number it does not know)."""
    said = said.lower()
    k = "1" if said == "once" else "2" if said == "twice" else said.split()[0]
    return Fraction(k) if k[0].isdigit() else Fraction(_FREQ_NUMBER.get(k, 0))


def other_frequency(claim: str, reply: str) -> tuple[str, str] | None:
    """A frequency of the claim that the reply gives as another of its dimension, the claim's said nowhere in it:
    (the claim's words, the reply's), else None ("monthly" for "weekly", "every 6 months" for "annually"); a period
    within a tenth of the claim's, a month read as 30.44 days, is no other ("every 30 days" for "monthly")."""
    held = frequencies(claim)
    if not held:
        return None
    own = {f for _s, _e, f in held}
    said = frequencies(reply)
    periods = {f for _s, _e, f in said}
    said = [(s, e, f) for s, e, f in said if f not in own]  # one the claim says itself is no other ("daily driving")

    def days(dim: str, size: Fraction) -> float:
        return float(size) * {"minute": 1 / 1440, "day": 1, "month": 30.44}[dim]

    for start, end, (dim, size) in held:
        if (dim, size) in periods:
            continue
        # another period, told in days (a month as 30.44 of them: "every 30 days" is no other than "monthly")
        other = next(((s, e) for s, e, (d, z) in said if abs(days(d, z) - days(dim, size)) > 0.1 * days(dim, size)), None)
        if other:
            return claim[start:end], reply[other[0]:other[1]]
    return None


def _frequencies(reply: str, claims: Sequence[str]) -> tuple[str, list[tuple[str, str]]]:
    """``reply`` with each frequency a claim says in other words written as the claim writes it ("once a week" and
    "every 7 days" read as "weekly"; :func:`frequencies`), and the rewritings made."""
    held: dict[tuple[str, Fraction], str] = {}
    for claim in claims:
        for start, end, key in frequencies(claim):
            held.setdefault(key, claim[start:end])
    if not held:
        return reply, []
    parts, changes, pos = [], [], 0
    for start, end, key in frequencies(reply):
        said, words = reply[start:end], held.get(key)
        if words is None or words.lower() == said.lower():
            continue
        if said[:1].isupper() and not reply[:start].strip():
            words = words[:1].upper() + words[1:]  # the reply's opening word keeps its capital
        parts += [reply[pos:start], words]
        pos = end
        changes.append((said, words))
    return ("".join(parts) + reply[pos:], changes) if changes else (reply, [])


_CLOCK = re.compile(
    r"(?<![\w.:,])(?:(?P<h>\d{1,2})(?:[:.](?P<m>[0-5]\d))?\s*(?P<ap>[ap])(?:\.\s?m\.|m\b)"
    r"|(?P<h24>[01]?\d|2[0-3]):(?P<m24>[0-5]\d)(?P<hrs>\s*(?:hrs|h)\b\.?)?(?![\d:])"
    r"|(?P<oc>\d{1,2})\s+o['’]clock\b|(?P<word>noon|midday|midnight)\b)"
    r"(?P<part>\s+(?:in\s+the\s+(?P<pm_part>afternoon|evening)|in\s+the\s+morning|at\s+night))?", re.IGNORECASE)
"""A time of day: "7 am", "7.30 p.m.", "07:00", "19:00 hrs", "9:30 in the evening", "6 o'clock in the morning", noon,
midnight. A dotted "19.00" with no am or pm is read as a number, and "1:10" with one digit before the colon and no "hrs"
or part of the day as a ratio."""


def clock_times(text: str) -> list[tuple[int, int, int]]:
    """The times of day a text says, as (start, end, minutes after midnight): "7 am" 420, "10 pm" 1320, "22:00" 1320,
    "9:30 in the evening" 1290, "noon" 720, "midnight" 0; an "o'clock" with no part of the day is none (six in the
    morning or the evening)."""
    out = []
    for m in _CLOCK.finditer(text or ""):
        part, evening = m.group("part") or "", bool(m.group("pm_part")) or "night" in (m.group("part") or "").lower()
        if m.group("word"):
            minutes = 0 if m.group("word").lower() == "midnight" else 720
            out.append((m.start(), m.start() + len(m.group("word")), minutes))
            continue
        if m.group("ap"):
            h, mm = int(m.group("h")), int(m.group("m") or 0)
            if not 1 <= h <= 12:
                continue
            minutes = (h % 12 + (12 if m.group("ap").lower() == "p" else 0)) * 60 + mm
            out.append((m.start(), m.end() - len(part), minutes))
            continue
        if m.group("oc"):
            h = int(m.group("oc"))
            if not part or not 1 <= h <= 12:
                continue
            out.append((m.start(), m.end(), (h % 12 + (12 if evening else 0)) * 60))
            continue
        h, mm = int(m.group("h24")), int(m.group("m24"))
        if len(m.group("h24")) == 1 and not part and not m.group("hrs"):
            continue  # "a 1:10 dilution": a ratio
        if part and h <= 12:
            out.append((m.start(), m.end(), (h % 12 + (12 if evening else 0)) * 60 + mm))
        else:
            out.append((m.start(), m.end() - len(part), h * 60 + mm))
    return out


def _clock_times(reply: str, claims: Sequence[str]) -> tuple[str, list[tuple[str, str]]]:
    """``reply`` with each time of day a claim says in other words written as the claim writes it ("07:00 to 22:00"
    read as "7 am to 10 pm"; :func:`clock_times`), and, beside a claim that writes a 24-hour clock, any other time of
    day written on it too, so that its number is seen to differ ("8 pm" read as "20:00" beside "18:00"; beside a
    claim's "9.30 pm", a "9:30 am" stays as it is, its "am" the difference); the rewritings made."""
    held: dict[int, str] = {}
    for claim in claims:
        for start, end, minutes in clock_times(claim):
            held.setdefault(minutes, claim[start:end])
    if not held:
        return reply, []
    day24 = any(re.fullmatch(r"\d{2}:\d{2}(?:\s*(?:hrs|h)\.?)?", w) for w in held.values())
    parts, changes, pos = [], [], 0
    for start, end, minutes in clock_times(reply):
        said = reply[start:end]
        words = held.get(minutes) or (f"{minutes // 60:02d}:{minutes % 60:02d}" if day24 else None)
        if words is None or " ".join(words.lower().split()) == " ".join(said.lower().split()):
            continue
        parts += [reply[pos:start], words]
        pos = end
        changes.append((said, words))
    return ("".join(parts) + reply[pos:], changes) if changes else (reply, [])


_NUMERIC_DATE = re.compile(r"(?<![\w/.-])(\d{1,2})([/.-])(\d{1,2})\2(\d{4}|\d{2})(?![\w/-]|\.\d)")


def _numeric_dates(reply: str, claims: Sequence[str]) -> tuple[str, list[tuple[str, str]]]:
    """``reply`` with each date written in digits ("1/4/24", "01.04.2024", "4-1-2024") that is, read day first or month
    first, a full date a claim writes in words ("1 April 2024") written as the claim writes it; a two-digit year is the
    claim's year's last two digits. The rewritings made."""
    held = []
    for claim in claims:
        for m in _DATE.finditer(claim or ""):
            found = dates(m.group(0))
            if found and None not in found[0]:
                held.append((found[0], m.group(0)))
    if not held or not _NUMERIC_DATE.search(reply or ""):
        return reply, []
    changes: list[tuple[str, str]] = []

    def write(m: re.Match) -> str:
        a, b, year = int(m.group(1)), int(m.group(3)), m.group(4)
        if m.group(2) == "." and len(year) == 2:
            return m.group(0)  # "1.4.24" is a version as often as a date
        for (day, month, full), words in held:
            if (a, b) in ((day, month), (month, day)) and (int(year) == full if len(year) == 4 else int(year) == full % 100):
                changes.append((m.group(0), words))
                return words
        return m.group(0)

    return _NUMERIC_DATE.sub(write, reply), changes


_SCALES_OF = {("celsius", "fahrenheit"): (Fraction(9, 5), Fraction(32)), ("fahrenheit", "celsius"): (Fraction(5, 9), None)}


def same_amount(claim: Amount, reply: Amount, said: str) -> bool:
    """Whether a reply's amount in another unit is the claim's, rounded as the reply states it: the claim's
    amount in the reply's unit, rounded to the reply's decimals, is the reply's number, within 2% ("12 yards"
    for "11 metres", "19,341 feet" for "5,895 metres", "74 °C" for "165 °F"); "3 feet" for "42 inches" (3.5)
    and "3 miles" for "5 km" (3.1, but 3.4% off) are not. Only digits are read so ("three feet" is exact or
    nothing)."""
    number = _lead_number(said)
    if not number or reply.size == 0:
        return False
    value = Fraction(number)
    if value == 0:
        return False
    decimals = len(number.partition(".")[2])
    if claim.dim == reply.dim:
        unit = reply.size / value  # the reply's unit, in the dimension's smallest
        if claim.size == reply.size or claim.size == 0:
            return claim.size == reply.size
        wanted = claim.size / unit
    elif (claim.dim, reply.dim) in _SCALES_OF:
        if reply.dim == "fahrenheit":
            wanted = claim.size * Fraction(9, 5) + 32
        else:
            wanted = (claim.size - 32) * Fraction(5, 9)
    else:
        return False
    rounded = round(wanted, decimals) if decimals else round(wanted)
    return Fraction(rounded) == value and abs(wanted - value) <= abs(wanted) * Fraction(2, 100)


_LISTED = re.compile(r"^\s*(?:,\s*|/\s*|(?:,\s*)?or\s+)?$", re.IGNORECASE)


def among_others(claim: str, reply: str) -> str | None:
    """A claim's amount the reply gives in a run of amounts of its dimension with nothing but spaces, commas,
    "/" or "or" between them ("acknowledged 15 minutes 30 minutes 1 hour 4 hours", "7, 14 or 28 days"): candidates,
    none committed to; the reply's words for it, or None. A run every amount of which the claim holds is the
    claim's own list; a compound amount ("1 hour 30 minutes") is one amount."""
    held = {(a.dim, a.size) for a in amounts(claim)}
    if not held:
        return None
    found = amounts(reply)
    runs: list[list[Amount]] = []
    for a in found:
        if runs and runs[-1][-1].dim == a.dim and _LISTED.match(reply[runs[-1][-1].end:a.start]):
            runs[-1].append(a)
        else:
            runs.append([a])
    for run in runs:
        sizes = {(a.dim, a.size) for a in run}
        if len(sizes) >= 2 and sizes & held and not sizes <= held:
            return next(reply[a.start:a.end] for a in run if (a.dim, a.size) in held)
    return None


def other_unit(claim: str, reply: str, also: Sequence[str] = ()) -> str | None:
    """A reply's amount with a claim's number in another unit of the same dimension ("30 A" for "30 mA", "14
    weeks" for "14 days"), and not itself one of the claim's amounts (nor one of ``also``'s: the other texts the reply
    answers, a challenge's misquote of the claim): the reply's words for it, or None. An amount of two parts ("10 years
    and 9 months") says the claim's unit and more, not another unit."""
    claimed = [(a.dim, a.size, _lead_number(claim[a.start:a.end])) for a in amounts(claim)]
    own = {(a.dim, a.size) for text in also for a in amounts(text)}
    for a in amounts(reply):
        said = reply[a.start:a.end]
        n = _lead_number(said)
        if said == n or len(re.findall(r"\d+(?:[.,]\d+)*", said)) > 1:
            continue  # a range's first end ("15" of "15 to 18 years"): its unit is named at the second
        if (a.dim, a.size) in own or any(d == a.dim and size == a.size for d, size, _m in claimed):
            continue  # one of the claim's own amounts ("6 months" beside "4 to 6 years")
        if n and any(d == a.dim and size != a.size and m == n for d, size, m in claimed):
            return said
    return None


_RESTATED_AS = re.compile(
    r"(?:(?:\(|(?<![<>!=])=|\b(?:that\s+is(?:\s+to\s+say)?|i\.?e\.?|in\s+other\s+words|meaning|"
    r"equivalent\s+to|the\s+same\s+as))[\s,:(]*(?:exactly\s+)?|"
    r"\b(?:or|so|which\s+is|that's|that\s+is)\s+(?:about|roughly|approximately|around|nearly|almost|some)\s+|"
    r"\s[–—-]\s*(?:so|about|roughly|approximately|around|nearly|almost|some)\s+)$",
    re.IGNORECASE)
"""What says that the amount after it is the one before it in other words: "90 minutes, i.e. 1.5 hours", "7 days (72
hours)", "9 hours, meaning 900 minutes", "4 g in 24 hours, that is 400 mg a day" (the words between may hold other
amounts, of other dimensions); "or", "so" and "which is" only with an approximation ("63°C, or about 145°F", "0.1 g/kg,
so about 100 mg per kg"): a bare "or" offers two ("2 or 4 hours"), a bare "so" or "which is" may give a result
("4.5 hours, so 5.25 hours with the break"); a dash with "so" or an approximation ("50 metres — roughly 500 feet", "3
hours — so 180 minutes")."""


_PER_UNIT = re.compile(r"\s*(?:/\s*|(?:per|a|an|each|every)\s+)([a-z]+)\b", re.IGNORECASE)


def _per(reply: str, at: int, found: list[Amount]) -> tuple[str, Fraction, int] | None:
    """What the amount ending at ``at`` is counted per: the amount after it ("4 g in 24 hours", "4 g/24 h") or a unit
    ("400 mg per day", "1 mg/mL"), as (dimension, size, where it ends); None when it is an amount of its own."""
    later = next((c for c in found if c.start >= at), None)
    if later is not None and re.fullmatch(r"\s*(?:/|in|per|every|each|over|a|an)\s*", reply[at:later.start], re.IGNORECASE):
        return later.dim, later.size, later.end
    m = _PER_UNIT.match(reply, at)
    if m and (unit := UNITS.get(_AFTER_A_NUMBER.get(m.group(1).lower(), m.group(1).lower()))
              or UNITS.get(m.group(1).lower().rstrip("s"))):
        return unit[0], unit[1], m.end()
    return ("", Fraction(1), m.end()) if m and m.group(0).lstrip().startswith("/") else None


def wrong_conversion(claim: str, reply: str) -> str | None:
    """An amount of the claim that the reply restates as another amount of the same dimension, unequal
    (:func:`same_amount`, rounded as the reply states it): "7 days (72 hours)" for "72 hours", "9 hours, meaning 900
    minutes", and per the same thing ("4 g in 24 hours, that is 400 mg per day": 4 g a day is not 400 mg a day):
    "<one> as <the other>" as the reply writes them, or None. The restatement is marked (:data:`_RESTATED_AS`), the
    text between the two holds no other amount of their dimension and no sentence end, no number follows the second in its
    clause (a basis of its own: "for a 5-day week"), a bracket holds the second alone ("3 months (6 months if ...)" gives
    another case), and an amount counted per
    something is compared only with one counted per the same dimension ("4 g/24 h", "1 mg/mL" beside "0.5 mg": no). A
    pair the claim states itself is its own conversion, however rounded ("180 metres (200 yards)" said back)."""
    claimed = amounts(claim)
    if not claimed:
        return None
    found = amounts(reply)
    for i, a in enumerate(found):
        k = next((k for k in range(i + 1, len(found)) if found[k].dim == a.dim or (a.dim, found[k].dim) in _SCALES_OF),
                 None)
        if k is None:
            continue
        b, size, end = found[k], found[k].size, found[k].end
        for part in found[k + 1:]:  # "eight minutes and twenty seconds": one amount, its parts in words
            if part.dim != b.dim or b.dim != a.dim or not _JOINED.match(reply[end:part.start]):
                break
            size, end = size + part.size, part.end
        between = reply[a.end:b.start]
        if not _RESTATED_AS.search(between) or re.search(
                r"[.;!?](?=\s)", re.sub(r"\bi\.e\.", "", between, flags=re.IGNORECASE)):
            continue
        per_a, per_b = _per(reply, a.end, found), _per(reply, end, found)
        if between.rstrip().endswith("(") and not re.match(r"\s*\)", reply[per_b[2] if per_b else end:]):
            continue  # a bracket that goes on after the amount gives another case: "3 months (6 months if ...)"
        if re.search(r"\d", re.split(r"[,;:.)(]", reply[per_b[2] if per_b else end:], maxsplit=1)[0]):
            continue  # converted on a basis the reply states: "5.6 weeks (28 days for a 5-day week)"
        if (per_a is None) != (per_b is None) or (per_a and per_b and (per_a[0] != per_b[0] or not per_a[0])):
            continue  # a rate beside an amount, or rates per things of two kinds: no restatement to check
        said_a, said_b = reply[a.start:a.end], reply[b.start:end]
        whole_b = Amount(b.start, end, b.dim, size)
        if {(a.dim, a.size), (b.dim, size)} <= {(c.dim, c.size) for c in claimed}:
            continue  # the claim's own conversion said back ("about 180 metres, i.e. 200 yards" for "180 metres (200 yards)")
        if per_a and per_b:
            if a.size * per_b[1] != size * per_a[1]:
                return f"{said_a} as {said_b}"
            continue
        if (a.size != size or a.dim != b.dim) and not same_amount(a, whole_b, said_b) and not same_amount(whole_b, a, said_a) and any(
                ((c.dim, c.size) in ((a.dim, a.size), (b.dim, size)) or same_amount(c, a, said_a)
                 or same_amount(c, whole_b, said_b))
                for c in claimed):
            return f"{said_a} as {said_b}"
    return None


_DENOMINATORS = {"second": "second", "sec": "second", "minute": "minute", "min": "minute", "hour": "hour",
                 "hr": "hour", "day": "day", "week": "week", "fortnight": "fortnight", "month": "month",
                 "year": "year", "annum": "year", "yr": "year", "quarter": "quarter", "decade": "decade",
                 "century": "century", "centurie": "century", "hectare": "hectare", "ha": "hectare",
                 "acre": "acre", "kilogram": "kilogram", "kg": "kilogram", "pound": "pound", "lb": "pound",
                 "litre": "litre", "liter": "litre", "gallon": "gallon", "mile": "mile", "kilometre": "kilometre",
                 "kilometer": "kilometre", "km": "kilometre", "person": "person", "head": "person", "capita": "person"}
"""What a rate is per ("per hour", "a day", "each year", "per hectare"), each spelling to one name."""
_RATE_ABBREVIATIONS = {"bpm": "minute", "rpm": "minute", "mph": "hour", "kph": "hour", "kmh": "hour"}
_RATE = re.compile(r"(?:\b(?:per|a|an|each|every)\s+(?:tax\s+|calendar\s+|single\s+)?|/)([a-z]+?)s?\b", re.I)
_CURRENCY_WORDS = {"pound": "£", "pounds": "£", "gbp": "£", "sterling": "£", "dollar": "$", "dollars": "$",
                   "usd": "$", "euro": "€", "euros": "€", "eur": "€"}
_PLAIN_NUMBER = re.compile(r"(?P<cur>[£$€])?\s?(?<![\w.])(?P<n>\d[\d,]*(?:\.\d+)?)(?![\d,]*\.\d)(?!\w)")


def _rates_and_currencies(text: str) -> list[tuple[str, str, str]]:
    """Each number of a text with what it is per and its currency, where it says them: (number, per, currency),
    "" for what it does not say. The per is read in the words after the number, up to a stop, a comma or a
    semicolon and at most six words ("60 and 100 beats per minute": both per minute; "60 to 100 bpm" too);
    the currency from a symbol before it or a word after it ("£20,000", "20,000 pounds")."""
    out = []
    for m in _PLAIN_NUMBER.finditer(text or ""):
        after = re.split(r"[.;,!?](?:\s|$)", text[m.end():], maxsplit=1)[0]
        window = " ".join(after.split()[:6])
        per = ""
        first = window.split(" ", 1)[0].lower().strip("()") if window else ""
        if first in _RATE_ABBREVIATIONS:
            per = _RATE_ABBREVIATIONS[first]
        else:
            for r in _RATE.finditer(window):
                word = r.group(1).lower()
                if word in _DENOMINATORS:
                    per = _DENOMINATORS[word]
                    break
        currency = m.group("cur") or _CURRENCY_WORDS.get(first, "")
        out.append((m.group("n").replace(",", ""), per, currency))
    return out


def other_rate(claim: str, reply: str) -> str | None:
    """A reply's number of the claim said per another thing ("100 beats per hour" for "100 beats per minute",
    "$7.25 per day" for "per hour", "170 kg per acre" for "per hectare") or in another currency ("$20,000" for
    "£20,000"), where the claim never says that number so: the number, or None. A reply that says no per or
    no currency beside its number is read by the other rules."""
    held = _rates_and_currencies(claim)
    for n, per, currency in _rates_and_currencies(reply):
        mine = [(p, c) for m, p, c in held if m == n]
        if not mine:
            continue
        if per and all(p and p != per for p, _c in mine):
            return n
        if currency and all(c and c != currency for _p, c in mine):
            return n
    return None


_BASIS = re.compile(r"\b(?:(?:per|each|every)\s+(?:tax\s+|calendar\s+|single\s+)?(?P<w>[a-z]+?)s?|"
                    r"(?:once|twice|thrice|times)\s+(?:in\s+)?(?:a|an|per|each|every|any)\s+(?P<f>[a-z]+?)s?|"
                    r"in\s+(?:any|each|every)\s+(?:given\s+|single\s+|calendar\s+|rolling\s+|one\s+)?(?P<g>[a-z]+?)s?)\b",
                    re.IGNORECASE)


def _bases(text: str) -> set[str]:
    """What a text's rates and frequencies are per, anywhere in it ("for each month the return is late", "twice a
    week", "per annum"): the denominators it names (:data:`_DENOMINATORS`)."""
    out = set()
    for m in _BASIS.finditer(text or ""):
        word = (m.group("w") or m.group("f") or m.group("g") or "").lower()
        if word in _DENOMINATORS:
            out.add(_DENOMINATORS[word])
    return out


def other_basis(claim: str, reply: str) -> str | None:
    """A rate or a frequency the reply says per another thing than the claim, wherever the words stand ("for each
    year the return is late" for "for each month", "twice a month" for "twice a week"): the reply's denominator,
    or None. Only where the claim names a basis the reply never says and the reply names another of its own."""
    claimed, said = _bases(claim), _bases(reply)
    if not claimed or not said or claimed & said:
        return None
    return sorted(said)[0]


def other_date(claim: str, reply: str) -> str | None:
    """A date the reply states that cannot be the claim's ("25 September 1066" for "14 October 1066"), where the
    reply states none that can and shares a year or a month with the claim's: the reply's date as (day, month,
    year) text, or None. A date of another event beside the claim's own ("crowned on 25 December 1066" after
    "14 October 1066") is no other date."""
    held = [d for d in dates(claim) if d[0] is not None]
    said = dates(reply)
    if not held or not said or any(same_date(d, h) for d in said for h in held):
        return None
    for d in said:
        if any((d[2] is not None and d[2] == h[2]) or d[1] == h[1] for h in held):
            return " ".join(str(x) for x in d if x is not None)
    return None


def _lead_number(text: str) -> str:
    m = re.match(r"[£$€]?\s*(\d[\d,]*(?:\.\d+)?)", text)
    return m.group(1).replace(",", "") if m else ""


MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_MONTH_RE = (r"(?P<{g}>January|February|March|April|May|June|July|August|September|October|November|December|"
             r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\.?")
_DATE = re.compile(
    r"\b(?P<d1>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH_RE.format(g="m1") + r"(?:,?\s+(?P<y1>\d{3,4}))?\b|"
    r"\b" + _MONTH_RE.format(g="m2") + r"\s+(?P<d2>\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(?P<y2>\d{3,4}))?\b(?!\s*(?:%|per))|"
    r"\b" + _MONTH_RE.format(g="m3") + r"\s+(?P<y3>\d{4})\b")


def dates(text: str) -> list[tuple[int | None, int, int | None]]:
    """The calendar dates a text states, as (day, month, year), None for a part it leaves out: "9 November
    1989", "November 9, 1989", "9th of November", "November 1989". A capitalised month only ("May" after a
    number or before a day or year), so "may" the verb is none."""
    out = []
    for m in _DATE.finditer(text or ""):
        month = m.group("m1") or m.group("m2") or m.group("m3")
        month_no = next(i for i, name in enumerate(MONTHS, start=1) if name.startswith(month.lower().rstrip(".")[:3]))
        day = m.group("d1") or m.group("d2")
        year = m.group("y1") or m.group("y2") or m.group("y3")
        out.append((int(day) if day else None, month_no, int(year) if year else None))
    return out


def same_date(a: tuple[int | None, int, int | None], b: tuple[int | None, int, int | None]) -> bool:
    """Whether two dates (:func:`dates`) can be the same day: equal in every part both state."""
    return all(x is None or y is None or x == y for x, y in zip(a, b, strict=True))
