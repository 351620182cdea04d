"""Word lists of the engine: stop words, negations, scope ends, abbreviations, verbs, expansions.

Each list is defined once, here, named by the reading it serves; where two readers need different
lists (the judges' :data:`STOPWORDS` and the gold judge's narrower :data:`FILLER`; the generators' stop
lists), each is a named list of this module, never a copy in its caller. Lists that differ only in form
are derived, not written twice (:data:`NEGATIONS_PLAIN`, :data:`GOLD_SCOPE_END`).
"""

from __future__ import annotations

import re

# -- stop words ---------------------------------------------------------------------------------

INTERJECTIONS = frozenset("hmm hmmm hm um umm uh erm ah oh alright".split())
"""Sounds a reply opens with that state nothing ("Hmm. <another fact>"; not "er": the ER is a place)."""

STOPWORDS = frozenset("""
a an the and or but if of to in on at by for with from as into onto about over under than then so such that this
these those there here it its itself they them their theirs he him his she her hers we us our you your i me my
is are was were be been being am do does did done has have had having can could should would may might will shall
must also just only very quite really simply some any each all both other another which who whom whose what when
where why how yes well okay ok sure certainly definitely probably perhaps maybe think believe guess say says said
know answer question correct correctly right exactly approximately roughly around nearly about called named known
up down out off again further once more most much many few less least own same too s t d ll m o re ve y
because since although though while whereas unless until whether
i'm i've i'd it's that's what's there's here's they're you're we're he's she's let's
的 了 是 在 和 与 及 或 吗 呢 吧 啊 个 也 都 就 它 他 她 们 这 那 有 为 要 会 能 很 把 被 让 使 着 过 地 得 之 其 所
""".split()) | INTERJECTIONS
"""Words that carry no fact: function words, answer scaffolding and interjections (negations are not here: they set
polarity)."""

FILLER = frozenset("""
and or but if of to in on at by for with from as into onto about over under than then so such that this these
those there here it its itself they them their he she his her we us our you your me my mine im ive id
is are was were be been being am do does did has have had having can could should would may might will shall
must also just only very quite really simply some any each all both other another which who whom whose what
when where why how yes well okay ok sure certainly definitely probably perhaps maybe think believe guess
say said know answer answers answered question correct correctly right exactly
called named known thats whats theres heres theyre youre
的 了 是 在 和 与 及 或 吗 呢 吧 啊 个 也 都 就 它 他 她 们 这 那 有 为
""".split())
"""The gold judge's function words: never evidence of an answer (a gold made only of them is kept whole).
Narrower than :data:`STOPWORDS`: "up", "down", "more", "same" and the like can be answers."""

QUESTION_STOPWORDS = frozenset("""a an the and or but if of to in on at by for with from as is are was were be been being
it its this that these those there their they them he she his her we you your i my our not no do does did
has have had can could should would may might will shall than then so such which who whom what when where
why how also into about over under more most other some any each all both only very just usually often
的 了 是 在 和 与 及 或 也 都 就 这 那 有 为""".split()) | INTERJECTIONS
"""The offline question generator's stop words (:func:`engine.text.tokens.question_words`)."""

BENCH_STOPWORDS = frozenset("""
a an the and or but if of to in on at by for with from as is are was were be been being it its this that these
those there their they them he she his her we our you your i me my not no do does did have has had can could
would should may might will shall than then so such also which who whom whose what when where why how all any
each other some more most many much into over under about after before between during through while very only
own same both few just one two three first new used use using well known called between because within per
""".split())
"""The offline bench generator's stop words (:func:`engine.text.tokens.topic_words`)."""

FUNCTION_WORDS = frozenset("""
a about above according across after afterwards again against all almost alone along already also although
always am among amongst an and another any anyhow anyone anything anyway anywhere are around as at back be
became because become becomes becoming been before beforehand behind being below beside besides between
beyond both but by can cannot could did do does doing done down due during each either else elsewhere enough
especially etc even ever every everyone everything everywhere except few first for former formerly from
further had has have having he hence her here hereafter hereby herein hers herself him himself his how however
i if in indeed instead into is it its itself just last latter latterly least less many may me meanwhile might
mine more moreover most mostly much must my myself namely neither never nevertheless next no nobody none
noone nor not nothing now nowhere of off often on once one only onto or other others otherwise our ours
ourselves out over own per perhaps please quite rather same second several she should since so some somehow
someone something sometime sometimes somewhere still such than that the their theirs them themselves then
thence there thereafter thereby therefore therein thereupon these they third this those though through
throughout thru thus to together too toward towards two under until up upon us very via was we well were what
whatever when whence whenever where whereafter whereas whereby wherein whereupon wherever whether which while
whither who whoever whole whom whose why will with within without would yet you your yours yourself
yourselves
""".split())
"""The entity extractor's function words: never an entity, stripped from the start of a capitalised run."""

GENERIC_WORDS = frozenset("""
able across actually allow allows almost approximately around called came certain come comes common commonly
considered contain contains could describe described despite different does early either eventually example
far found four gave generally get gets given gives go goes going good got great greater greatest high higher
highest however include included includes including known large larger largest late later lead leads led
like likely long make makes making many mean means much must near nearly new number numbers often old part
particular particularly possible probably rather really recent recently result results said say says see seen
shown significant significantly similar since small smaller smallest specific such take taken takes term terms
three time times today type types use used uses using usually various way ways well whereas whether wide
widely within work works year years
form forms occur occurs occurred natural normal present modern major minor general following lower upper
central main cause causes effect effects important based end ends order produce role show shows provide
provides related total better best give along overall
""".split())
"""Generic words that are never a domain term on their own (but may start a name: "Great Wall")."""

# -- verbs --------------------------------------------------------------------------------------

VERBS = frozenset("""is are was were has have had can could may might will would should must does do
causes cause caused makes make made becomes become became contains contain includes include produces
produce produced forms form formed lies lie consists consist releases release released takes take took
spreads spread occurs occur occurred shows show showed leads lead led reduces reduce increases increase
requires require required kills kill affects affect helps help gives give gave means mean shortens shorten
start starts started appears appear appeared carries carry carried peak peaks work works act acts need needs
depend depends reverse reverses raise raises lower lowers prevent prevents treat treats cover covers""".split())
"""Verb forms that end a sentence's opening noun phrase (:func:`engine.text.subjects.subject_of`)."""

PAST_VERBS = frozenset("""found became began wrote won lost built led left gave took saw went came held ran grew fell rose
bore born sold bought brought fought taught thought kept met paid said sent set spent stood told understood
""".split())
"""Common irregular past forms (:func:`engine.text.subjects.is_verb`)."""

_ANTONYM_PAIRS = """before after | minimum maximum | more less | more fewer | most least | higher lower |
larger smaller | bigger smaller | greater smaller | greater less | longer shorter | increase decrease |
increases decreases | increased decreased | increase reduce | rise fall | rises falls | above below |
over under | inside outside | during outside | within outside | within beyond | upper lower | first last | earliest latest | early late | earlier later |
allowed banned | allowed prohibited | allowed forbidden | permitted prohibited | permitted banned |
permitted forbidden | required optional | mandatory optional | compulsory optional | must optional | include exclude |
included excluded | north south | east west | left right | summer winter | spring autumn | day night |
morning evening | male female | men women | open closed | opened closed | opens closes | hot cold | warm cold | wet dry | positive negative |
safe unsafe | legal illegal | valid invalid | eligible ineligible | start end | starts ends | begins ends |
young old | younger older | start stop | starts stops | started stopped | starting stopping | stops begins |
stopped began | stopped begun | youngest oldest | younger elder | lowest highest | smallest largest |
shortest longest | heavier lighter | warmer colder | cheaper dearer | faster slower | new old | heavy light | fast slow | high low | wide narrow | thick thin | strong weak |
internal external | import export | imports exports | buy sell | buys sells | win lose | won lost |
entry exit | arrival departure | input output | acute chronic | benign malignant | oral written |
public private | full part | daily weekly | weekly monthly | monthly yearly |
accept reject | accepted rejected | approve refuse | approved refused | gain loss | profit loss |
credit debit | debtor creditor | landlord tenant | employer employee | buyer seller | plaintiff defendant |
increase lower | raise lower | raises lowers | raised lowered | true false | correct incorrect | always never |
since until | exceeds under | exceed under | exceeds below | port starboard | adult child | adults children |
controller processor | inbound outbound | upstream downstream | ascending descending | odd even |
intramuscular intravenous | intramuscularly intravenously | intramuscular subcutaneous |
intramuscularly subcutaneously | intravenous subcutaneous | intravenously subcutaneously |
intravenous oral | intravenously orally | intramuscular oral | intramuscularly orally"""
ANTONYMS = frozenset(frozenset(p.split()) for p in _ANTONYM_PAIRS.replace("\n", " ").split("|"))
"""Pairs of words that say the opposite of each other (or the other party, the other end): a claim's word
replaced by its pair in the claim's own frame states another fact ("before the leave starts" said "after
the leave starts"; :func:`engine.judge.fact_words.swapped_name`). Word vectors put such pairs as close as
synonyms ("larger"/"smaller" 0.87), so the pairs are listed."""


OPPOSITES: dict[str, frozenset[str]] = {}
"""Each listed word's opposites (:data:`ANTONYMS`)."""
for _pair in ANTONYMS:
    for _word in _pair:
        OPPOSITES[_word] = OPPOSITES.get(_word, frozenset()) | (_pair - {_word})


_NEGATING_PREFIXES = ("non-", "non", "un")
"""Prefixes that make a word its opposite ("unlisted", "unplanned", "non-urgent"), before a stem of four letters or more."""


def opposites_of(word: str) -> frozenset[str]:
    """A word's opposites: the listed ones (:data:`OPPOSITES`) and the word with a negating prefix added or taken
    away ("listed" -> "unlisted", "unplanned" -> "planned")."""
    w = word.lower()
    out = set(OPPOSITES.get(w, ()))
    for p in _NEGATING_PREFIXES:
        if w.startswith(p) and len(w) - len(p) >= 4:
            out.add(w[len(p):])
            break
    else:
        if len(w) >= 4 and w.isalpha():
            out.update(p + w for p in _NEGATING_PREFIXES)
    return frozenset(out)


def opposite(a: str, b: str) -> bool:
    """Whether two words are opposites: a listed pair (:data:`ANTONYMS`), or one the other with a negating prefix
    ("unlisted", "listed"), in either order, any case."""
    return frozenset((a.lower(), b.lower())) in ANTONYMS or b.lower() in opposites_of(a) or a.lower() in opposites_of(b)


FINITE = frozenset("is was are were".split())
"""Copulas: a verb inside a stretch makes it a clause ("K2 is the second; the tallest is Everest"), not a list item."""
COLOURS = frozenset("red green blue yellow white black orange amber purple grey gray brown pink violet".split())
"""Colour words: values a claim may state (a signal's, a wire's, a category's) that another colour replaces."""

PERSON_WORDS = frozenset("""man woman person collector scientist writer author poet painter artist politician
king queen emperor empress prince princess leader general soldier explorer inventor engineer physician doctor
nurse teacher philosopher composer musician singer actor actress player athlete lawyer judge priest bishop pope
palaeontologist paleontologist chemist physicist biologist mathematician astronomer economist historian
architect merchant farmer sailor pilot founder president minister keeper carpenter captain officer surgeon clerk
manager owner director secretary assistant son daughter nephew niece brother sister wife husband widow""".split())
"""Nouns that define a person ("an English fossil collector": :func:`engine.text.subjects.is_person`)."""

# -- negation -----------------------------------------------------------------------------------

NEGATIONS = frozenset("""not no never none neither nor nothing nobody nowhere cannot can't don't doesn't didn't
isn't aren't wasn't weren't won't wouldn't shouldn't couldn't hasn't haven't hadn't ain't n't""".split())
"""Words that negate what follows them (English)."""
PROHIBITIONS = frozenset("prohibit prohibits prohibited prohibiting forbid forbids forbidden forbidding forbade banned "
                         "barred disallowed precluded".split())
"""Words that forbid what follows them: "Drivers are prohibited from using a phone" says what "Drivers must not use a
phone" says, and "not prohibited" allows it (two negations assert)."""
DENIALS = frozenset("false untrue myth misconception".split()) | PROHIBITIONS
"""Words that deny a statement they describe ("it is a myth that ...", "that is false"), and the prohibitions."""
NEGATION_CJK = re.compile("不|没|并非|未|無|无")
"""Chinese negation characters."""


def is_negation(token: str) -> bool:
    """A negation or denial word (:data:`NEGATIONS`, :data:`DENIALS`) or a Chinese negation."""
    return token in NEGATIONS or token in DENIALS or bool(NEGATION_CJK.fullmatch(token))



NEGATIONS_PLAIN = frozenset(w.replace("'", "") for w in NEGATIONS - {"n't"}) | DENIALS | {"wrong", "incorrect"}
"""The negations as the gold judge's tokens write them (apostrophes dropped: "dont"), with the words that
call a statement wrong ("wrong", "false", "incorrect", "untrue", "myth", "misconception")."""

SCOPE_END = frozenset("but rather instead however though although yet whereas unless".split())
"""Words that end a negation's scope ("not A but B"; "may not carry passengers unless they have made three
landings": the condition is asserted, not denied); the Chinese forms are 但/而/却/可是."""
SCOPE_END_CJK = ("但", "而", "却", "可是")
"""The Chinese words that end a negation's scope."""
GOLD_SCOPE_END = SCOPE_END | {"except"}
"""The gold judge's scope ends: :data:`SCOPE_END` and "except" ("nothing except X" credits X)."""

# -- abbreviations ------------------------------------------------------------------------------

ABBREVIATIONS = frozenset("""mr mrs ms dr prof sr jr st mt ft rev gen col lt sgt capt cmdr adm gov sen rep pres
supt insp det cpl pvt maj brig hon messrs mme mlle
inc ltd co corp bros dept univ assn est approx vs etc al cf ca fig figs vol vols ed eds no nos op pp
jan feb mar apr jun jul aug sep sept oct nov dec mon tue tues wed thu thur thurs fri sat sun""".split())
"""Words that end in a dot without ending a sentence (lower case, without the dot)."""
ONLY_BEFORE_NUMBER = frozenset({"no", "nos", "op", "pp", "fig", "figs", "vol", "vols", "mar", "sun", "sat"})
NAME_ENDINGS = frozenset({"inc", "ltd", "co", "corp", "bros", "plc", "llc", "etc"})
"""Abbreviations that end a name or a list ("Northwind Charter Ltd.", "... and so on, etc."): a sentence may end
with them, and does before a word that opens sentences ("The", "It", "This" ...)."""
SENTENCE_OPENERS = frozenset("the a an it its this these those they their he she his her we our you there in on "
                             "at for each every all no some if when after before from during".split())
"""Words that open a sentence far more often than they continue a name: after a name's ending, a new sentence."""
"""Abbreviations that are also words: they keep a sentence going only before a number ("No. 5")."""
GOLD_ABBREVIATIONS = frozenset("""dr mr mrs ms st jr sr vs v etc inc ltd co no nos gen col capt prof rev mt ft
fig vol approx est dept univ corp bros jan feb mar apr jun jul aug sep sept oct nov dec""".split())
"""The gold judge's abbreviations (a subset of :data:`ABBREVIATIONS` and "v"): the gold judge's sentence
rule keeps a sentence going after one when a capital or a number follows, so a word that is also a
common word ("sun", "sat", "ed", "al") would join sentences there; its verdicts were measured with this list."""

# -- what abbreviations stand for ---------------------------------------------------------------

EXPANSIONS: dict[str, str] = {
    "DNA": "deoxyribonucleic acid", "RNA": "ribonucleic acid", "mRNA": "messenger ribonucleic acid",
    "tRNA": "transfer ribonucleic acid", "ATP": "adenosine triphosphate", "ADP": "adenosine diphosphate",
    "NADH": "nicotinamide adenine dinucleotide", "NADPH": "nicotinamide adenine dinucleotide phosphate",
    "NaCl": "sodium chloride", "USSR": "Soviet Union", "PRC": "People's Republic of China",
}
"""Abbreviations that are not the initials of what they stand for: the gold judge reads an expansion as
its abbreviation ("ribonucleic acid interference" = "RNA interference"). Initials ("NATO", "USA") are
matched by the gold judge's own acronym rule, so they are not listed, nor any abbreviation that is also
a common word ("WHO", "US", "AIDS"). A general table, extended by editing it; not written for any one
benchmark's items."""

_EXPANSION_RE = re.compile("|".join(rf"\b{re.escape(long)}\b" for long in
                                    sorted(set(EXPANSIONS.values()), key=len, reverse=True)), re.IGNORECASE)
_SHORT_OF = {long.lower(): short for short, long in EXPANSIONS.items()}


def abbreviate(text: str) -> str:
    """The text with each expansion of :data:`EXPANSIONS` replaced by its abbreviation."""
    return _EXPANSION_RE.sub(lambda m: _SHORT_OF.get(m.group(0).lower(), m.group(0)), text or "")
