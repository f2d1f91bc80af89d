"""The forms of an analytical reading (:mod:`~sparqlqa.strategies.offline.tables.reading`): conditions first, then
a superlative, a count, aggregates or rows, each compiled through the reading's :class:`QueryBuilder`."""

from __future__ import annotations

__all__ = ["read_table_question"]

from sparqlqa.english import (
    ARTICLE,
    AVERAGE_WORDS,
    CHOICE_WORD,
    COMPARISON_COLUMNS,
    GROUP_SKIPS,
    LIMIT_WORD,
    LIST_JOINERS,
    VALUE_SUPERLATIVES,
    YEAR_WORD,
)
from sparqlqa.kb.schema import local_name
from sparqlqa.strategies.offline.tables.mentions import Mention, find_mentions, tokens
from sparqlqa.strategies.offline.tables.model import Column, TableModel
from sparqlqa.strategies.offline.tables.query import QueryBuilder, TableQuery
from sparqlqa.strategies.offline.tables.reading import Reading, after, column_for, focus_of, read_cues


def read_table_question(question: str, model: TableModel, type_predicate: str) -> TableQuery | None:
    """The question's analytical reading compiled to SPARQL, or None when no reading holds."""
    words = tokens(question)
    mentions = find_mentions(model, words)
    cues = read_cues(words)
    focus = focus_of(model, mentions, cues, words)
    if focus is None:
        return None
    reading = Reading(words, mentions, cues, focus[0], QueryBuilder(model, focus[0], type_predicate))
    if focus[1] is not None:
        focus[1].used = True
    try:
        return _build_reading(reading)
    except KeyError:  # a class the focus cannot reach
        return None


def _name(builder: QueryBuilder, column: Column) -> str:
    base = "".join(ch if ch.isalnum() else "_" for ch in local_name(column.iri)).strip("_") or "value"
    taken = {name for _, name in builder.select}
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    return name


def _implied_column(reading: Reading, word: str, at: int | None = None) -> Column | None:
    """A numeric column of a reachable class whose words hold ``word`` ("older" → age): of a class named
    just before token ``at`` ("a concert in 2014"), else the focus's, else a neighbour's."""
    builder = reading.builder
    near = [c for m in reading.mentions if m.kind == "class" and at is not None and at - 4 <= m.start < at
            for c in m.classes]
    order = [*near, reading.focus, *builder.model.by_distance(reading.focus)]
    for cls in order:
        for column in builder.model.columns_of(cls):
            if column.numeric and word in column.words and builder.reachable(cls):
                return column
    return None


def _column_mention(reading: Reading, start: int, end: int) -> Mention | None:
    return next((m for m in reading.mentions if m.kind == "column" and not m.used and start <= m.start < end), None)


def _numbers(reading: Reading, first: Mention) -> list[Mention]:
    """A number and those joined to it by "or" ("in 2014 or 2015")."""
    found, at = [first], first.end
    for mention in reading.mentions[reading.mentions.index(first) + 1:]:
        if mention.kind == "number" and mention.start == at + 1 and reading.words[at].low in LIST_JOINERS:
            found.append(mention)
            at = mention.end
    return found


def _number_condition(reading: Reading, number: Mention) -> bool:
    words, cues = reading.words, reading.cues
    comparison = next(((s, e, op) for s, e, op in cues.comparisons if number.start - 2 <= e <= number.start), None)
    op = comparison[2] if comparison else "="
    if comparison:
        reading.compared.add(comparison[0])
    if comparison and _having(reading, number, op):
        return True
    column_mention = None
    if comparison:
        column_mention = _column_mention(reading, comparison[1], number.start) or \
            _column_mention(reading, comparison[0], comparison[1]) or \
            _column_mention(reading, max(0, comparison[0] - 3), comparison[0])
    column_mention = column_mention or _column_mention(reading, number.end, number.end + 1) or next(
        (m for m in reading.mentions if m.kind == "column" and not m.used and m.end == number.start), None)
    column = column_for(reading, column_mention) if column_mention else None
    if column is None:
        lead = words[comparison[0]].low if comparison else words[number.start - 1].low if number.start else ""
        implied = COMPARISON_COLUMNS.get(lead) or (YEAR_WORD if words[number.start - 1].low == YEAR_WORD else None)
        column = _implied_column(reading, implied, number.start) if implied else None
    column = column or (None if comparison else _key_of(reading, number))
    if column is None:
        return False
    group = _numbers(reading, number)
    reading.builder.compare(column, op, [m.number or 0.0 for m in group])
    for mention in [*group, *([column_mention] if column_mention else [])]:
        mention.used = True
    return True


def _key_of(reading: Reading, number: Mention) -> Column | None:
    """"student 1001": a figure right after a class names its node by its key column."""
    named = next((m for m in reading.mentions if m.kind == "class" and m.end == number.start), None)
    if named is None:
        return None
    cls = named.classes[0]
    key = next((c for c in reading.builder.model.columns_of(cls) if c.key and c.numeric), None)
    if key is not None and reading.builder.reachable(cls):
        named.used = True
        return key
    return None


def _value_condition(reading: Reading, value: Mention) -> bool:
    builder = reading.builder
    order = [reading.focus, *builder.model.by_distance(reading.focus)]
    named = next((m for m in reading.mentions if (m.kind == "column" and abs(m.start - value.end) <= 1)
                  or (m.kind == "column" and abs(value.start - m.end) <= 2)), None)
    wanted = {c.iri for c in named.columns} if named else set()
    for cls in order:
        held = [(p, lit) for p, c, lit in value.values if c == cls and builder.reachable(cls)]
        chosen = [(p, lit) for p, lit in held if p in wanted] or held
        if chosen:
            column = next(c for c in builder.model.columns_of(cls) if c.iri == chosen[0][0])
            literals = [lit for p, lit in chosen if p == column.iri]
            for other in _alternatives(reading, value):
                literals += [lit for p, c, lit in other.values if p == column.iri]
                other.used = True
            builder.equals(column, list(dict.fromkeys(literals)))
            value.used = True
            if named and column.iri in wanted:
                named.used = True
            return True
    return False


def _alternatives(reading: Reading, first: Mention) -> list[Mention]:
    """Values joined to ``first`` by "or" ("cat or dog")."""
    found, at = [], first.end
    for mention in reading.mentions[reading.mentions.index(first) + 1:]:
        if mention.kind == "value" and mention.start == at + 1 and reading.words[at].low == CHOICE_WORD:
            found.append(mention)
            at = mention.end
    return found


def _having(reading: Reading, number: Mention, op: str) -> bool:
    """"students who have more than one pet": a count of a joined class compared."""
    counted = next((m for m in reading.mentions if m.kind == "class" and number.end <= m.start <= number.end + 2
                    and not m.used), None)
    if counted is None or counted.classes[0] == reading.focus or not reading.builder.reachable(counted.classes[0]):
        return False
    reading.builder.having(counted.classes[0], op, number.number or 0.0)
    counted.used = number.used = True
    return True


def _conditions(reading: Reading) -> bool:
    for mention in reading.mentions:
        if mention.used:
            continue
        if mention.kind == "number" and not _number_condition(reading, mention) and not _is_limit(reading, mention):
            return False
        if mention.kind == "value" and not mention.values and not _contains(reading, mention):
            return False
        if mention.kind == "value" and mention.values and not _value_condition(reading, mention):
            return False
    return True


def _is_limit(reading: Reading, mention: Mention) -> bool:
    """"the top 3 …": a number right after "top" limits the rows."""
    if mention.start and reading.words[mention.start - 1].low == LIMIT_WORD and mention.number:
        reading.builder.limit = int(mention.number)
        mention.used = True
        return True
    return False


def _negation(reading: Reading) -> None:
    """"stadiums without any concert", "students who do not have a cat": no joined node (with that value)."""
    at = reading.cues.negation
    target = next((m for m in reading.mentions if at is not None and at <= m.start <= at + 3
                   and m.kind in ("class", "value") and not m.used), None)
    if target is None:
        return
    builder = reading.builder
    if target.kind == "class" and target.classes[0] != reading.focus and builder.reachable(target.classes[0]):
        _absent_class(reading, target)
        return
    held = [(p, c, lit) for p, c, lit in target.values if c != reading.focus and builder.reachable(c)]
    if target.kind == "value" and held:
        column = next(c for c in builder.model.columns_of(held[0][1]) if c.iri == held[0][0])
        builder.absent(column.cls, column, tuple(lit for p, _, lit in held if p == column.iri))
        target.used = True
        for mention in reading.mentions:  # "a cat as a pet": the class said with the value
            if mention.kind == "class" and target.end <= mention.start <= target.end + 2 \
                    and column.cls in mention.classes:
                mention.used = True


def _absent_class(reading: Reading, target: Mention) -> None:
    """No joined node of the class, or none with the number said right after it ("did not have a
    concert in 2014")."""
    cls, builder = target.classes[0], reading.builder
    target.used = True
    number = next((m for m in reading.mentions if m.kind == "number" and target.end <= m.start <= target.end + 2), None)
    if number is not None:
        before = reading.words[number.start - 1].low
        implied = COMPARISON_COLUMNS.get(before)
        column = next((c for c in builder.model.columns_of(cls) if implied and implied in c.words and c.numeric), None)
        if column is not None:
            number.used = True
            builder.absent(cls, column, compare=("=", [number.number or 0.0]))
            return
    builder.absent(cls)


def _average_conditions(reading: Reading) -> bool:
    """"singers above the average age", "older than average": a value against its class's average."""
    words = reading.words
    for start, end, op in reading.cues.comparisons:
        at = end + (1 if end < len(words) and words[end].low == ARTICLE else 0)
        if at >= len(words) or words[at].low not in AVERAGE_WORDS or op == "between":
            continue
        mention = _column_mention(reading, at + 1, at + 2) or _column_mention(reading, max(0, start - 3), start)
        column = column_for(reading, mention) if mention else _implied_column(
            reading, COMPARISON_COLUMNS.get(words[start].low, ""))
        if column is None or not column.numeric:
            return False
        if mention is not None:
            mention.used = True
        reading.builder.compare_to_average(column, op)
        reading.compared.add(start)
        reading.cues.aggregates = [(i, f) for i, f in reading.cues.aggregates if i != at]
    return True


def _contains(reading: Reading, value: Mention) -> bool:
    """A quoted text the data does not hold, said with a text column ("'Hey' in its name"): contained."""
    named = next((m for m in reading.mentions if m.kind == "column" and value.end <= m.start <= value.end + 3), None)
    column = column_for(reading, named) if named is not None else None
    if column is None or column.numeric or named is None:
        return False
    reading.builder.contains(column, value.text.strip("'\"\u2018\u2019"))
    value.used = named.used = True
    return True


def _outputs(reading: Reading, owner: str | None = None) -> list[Column]:
    """The columns the question asks for (unused column mentions; class mentions said as a name)."""
    found = []
    for mention in reading.mentions:
        if mention.kind != "column" or mention.used:
            continue
        column = column_for(reading, mention, owner)
        if column is not None and (owner is None or column.cls == owner):
            found.append(column)
            mention.used = True
    return found


def _name_of(reading: Reading, cls: str) -> Column | None:
    model = reading.builder.model
    return model.naming(cls) or next((c for c in model.columns_of(cls) if c.key), None)


def _select_columns(reading: Reading, columns: list[Column]) -> None:
    builder = reading.builder
    for column in {(c.cls, c.iri): c for c in columns}.values():
        builder.output(builder.value(column), _name(builder, column))


def _group_key(reading: Reading) -> tuple[str, Mention] | None:
    """What follows "each"/"per": a class linked to the focus, or a column."""
    at = reading.cues.group
    if at is not None and at < len(reading.words) and reading.words[at].low in GROUP_SKIPS:
        at += 1
    mention = next((m for m in reading.mentions if m.start == at), None)
    if mention is None:
        return None
    if mention.kind == "class" and mention.classes[0] != reading.focus and reading.builder.reachable(
            mention.classes[0]):
        return "class", mention
    if mention.kind in ("column", "class") and mention.columns:
        return "column", mention
    return None


def _group_outputs(reading: Reading, key: tuple[str, Mention]) -> bool:
    """Select and group by the group key: a class's name (and the columns asked of it), or a column."""
    builder = reading.builder
    kind, mention = key
    mention.used = True
    if kind == "class":
        cls = mention.classes[0]
        asked = _outputs(reading, owner=cls)
        name = _name_of(reading, cls)
        columns = asked or ([name] if name else [])
        builder.group.append(builder.node(cls))
    else:
        column = column_for(reading, mention)
        if column is None:
            return False
        columns = [column, *_outputs(reading, owner=column.cls)]
    _select_columns(reading, columns)
    builder.group += list(dict.fromkeys(builder.value(c) for c in columns))
    return True


def _aggregates(reading: Reading) -> list[tuple[str, Column]]:
    """Each aggregate word with the next column mention after it ("average, minimum and maximum age")."""
    pairs = []
    for at, function in reading.cues.aggregates:
        mention = next((m for m in reading.mentions if m.kind == "column" and at < m.start <= at + 4), None)
        column = column_for(reading, mention) if mention else None
        if mention is not None and column is not None and column.numeric:
            mention.used = True
            if (function, column) not in pairs:
                pairs.append((function, column))
    return pairs


def _superlative(reading: Reading) -> bool:
    """"the X with the most Y" (a count per node, ordered), "the X with the highest C" / "the youngest X"."""
    for at, direction in reading.cues.superlatives:
        if _ranked_figure(reading, at, direction):
            return True
        target = next((m for m in reading.mentions if at < m.start <= at + 4 and m.kind in ("class", "column")), None)
        if target is not None and target.kind == "class" and _count_by(reading, target, direction):
            return True
        if target is not None and target.kind == "column" and not target.used:
            column = column_for(reading, target)
            if column is not None and column.numeric:
                target.used = True
                return _top(reading, column, direction)
    for token in reading.words:
        if token.low in VALUE_SUPERLATIVES:
            word, direction = VALUE_SUPERLATIVES[token.low]
            column = _implied_column(reading, word)
            if column is not None and not reading.cues.order:
                return _top(reading, column, direction)
    return False


def _ranked_figure(reading: Reading, at: int, direction: str) -> bool:
    """"the city with the largest total capacity": a total or average per group (the columns asked, else the
    focus by its name), ordered, with a limit; the figure is shown after the group's columns."""
    word, function = next(((i, f) for i, f in reading.cues.aggregates if at < i <= at + 2 and f in ("SUM", "AVG")),
                          (at, None))
    mention = next((m for m in reading.mentions if m.kind == "column" and not m.used and word < m.start <= word + 3),
                   None)  # the word itself starting the column's name ("average attendance") is a stored value
    column = column_for(reading, mention) if mention is not None else None
    if function is None or mention is None or column is None or not column.numeric:
        return False
    builder = reading.builder
    asked = any(m.kind == "column" and not m.used and m is not mention for m in reading.mentions)
    if not asked and column.cls == reading.focus:
        return False  # a total per node of its own value is that value: a stored value orders it
    mention.used = True
    columns = _outputs(reading)
    if not columns:
        columns = _default(reading)
        builder.group.append("?x")
    _select_columns(reading, columns)
    builder.group += list(dict.fromkeys(builder.value(c) for c in columns))
    name = f"{function.lower()}_{_name(builder, column)}"
    builder.output(f"{function}({builder.numeric(column)})", name, aggregate=True)
    builder.order.append(f"{direction}(?{name})")
    builder.limit = builder.limit or 1
    return True


def _top(reading: Reading, column: Column, direction: str) -> bool:
    builder = reading.builder
    builder.order.append(f"{direction}({builder.numeric(column)})")
    builder.filters.append(f"FILTER({builder.numeric(column)} = {builder.numeric(column)})")  # a number
    builder.limit = builder.limit or 1
    _select_columns(reading, _outputs(reading) or _default(reading))
    return True


def _default(reading: Reading) -> list[Column]:
    name = _name_of(reading, reading.focus)
    return [name] if name else []


def _count_by(reading: Reading, target: Mention, direction: str) -> bool:
    """The group (the focus, or a group key) with the most/least nodes of the counted class."""
    builder = reading.builder
    counted = target.classes[0]
    key = _group_key(reading)
    if counted != reading.focus and builder.reachable(counted):
        var = builder.node(counted)
        columns = _outputs(reading, owner=reading.focus) or _default(reading)
        _select_columns(reading, columns)
        builder.group += ["?x", *dict.fromkeys(builder.value(c) for c in columns)]
    elif key is not None and _group_outputs(reading, key):
        var = "?x"
    else:
        loose = next((m for m in reading.mentions if m.kind == "column" and not m.used), None)
        if loose is None or not _group_outputs(reading, ("column", loose)):
            return False
        var = "?x"
    target.used = True
    builder.output(f"COUNT({var})", "count", aggregate=True)
    builder.order.append(f"{direction}(?count)")
    builder.limit = builder.limit or 1
    return True


def _count(reading: Reading) -> bool:
    builder, cues = reading.builder, reading.cues
    if cues.count is None:
        return False
    key = _group_key(reading)
    if key is not None:
        if not _group_outputs(reading, key):
            return False
        builder.output("COUNT(?x)", "count", aggregate=True)
        return True
    counted = after(reading.mentions, cues.count, "column", 2)
    column = column_for(reading, counted) if counted is not None and not counted.used else None
    if column is not None and counted is not None:
        counted.used = True
        builder.output(f"COUNT(DISTINCT {builder.value(column)})", "count", aggregate=True)
    else:
        builder.output("COUNT(?x)", "count", aggregate=True)
    return True


def _aggregate(reading: Reading) -> bool:
    pairs = _aggregates(reading)
    if not pairs:
        return False
    builder = reading.builder
    key = _group_key(reading)
    if key is not None and not _group_outputs(reading, key):
        return False
    for function, column in pairs:
        name = f"{function.lower()}_{_name(builder, column)}"
        builder.output(f"{function}({builder.numeric(column)})", name, aggregate=True)
    return True


def _rows(reading: Reading) -> bool:
    builder = reading.builder
    columns = _outputs(reading) or _default(reading)
    if not columns:
        return False
    if all(builder.value(c) in builder.fixed for c in columns):
        return False  # "who sang in Auditions" read as "Auditions": the answer would only repeat the question
    builder.distinct = reading.cues.distinct
    if reading.cues.order:
        _order(reading, columns)
    _select_columns(reading, columns)
    return True


def _order(reading: Reading, columns: list[Column]) -> None:
    builder, words = reading.builder, reading.words
    direction = "DESC" if reading.cues.descending else "ASC"
    by = next((word for token in words for word, d in [VALUE_SUPERLATIVES.get(token.low, ("", ""))] if word), None)
    chosen = next((c for c in columns if by and by in c.words), None) or next(
        (c for c in reversed(columns) if c.numeric), columns[-1])
    builder.order.append(f"{direction}({builder.numeric(chosen) if chosen.numeric else builder.value(chosen)})")


def _build_reading(reading: Reading) -> TableQuery | None:
    """Conditions, then the first form that holds; None unless every mention is used."""
    _negation(reading)
    if not _average_conditions(reading) or not _conditions(reading):
        return None
    shaped = _superlative(reading) or _count(reading) or _aggregate(reading) or _rows(reading)
    builder = reading.builder
    for mention in reading.mentions:
        if not mention.used and mention.kind == "class" and reading.focus in mention.classes:
            mention.used = True
        if not mention.used and mention.kind == "class" and builder.reachable(mention.classes[0]):
            builder.node(mention.classes[0])
            mention.used = True
    if not shaped or any(not m.used for m in reading.mentions) or reading.unexplained():
        return None
    return builder.query(", ".join(m.text for m in reading.mentions))
