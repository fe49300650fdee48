"""daily-weather restated in plain, slow Python, from the rulebook, RULINGS.md and the draw
protocol in docs/games/daily-weather.md -- not from the kernel.

The map is a dict {(row, col): Cell} of the visible cells, the Month Card's top-left cell at
(0, 0). Cards are read straight from the card data TOML (parsed here, not by the kernel).
``play(cards, rules, seed, game, policy)`` returns the full result row the kernel writes.
"""
from __future__ import annotations

from dataclasses import dataclass

from tests.reference.prng import DEAL, SEAT, Stream

ICONS = ["sun", "cloud", "rain", "snow"]
BACKGROUNDS = ["plain", "striped"]
SYMBOLS = ICONS + BACKGROUNDS
MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]
HOLIDAYS = ["none", "valentine", "halloween", "thanksgiving", "christmas", "birthday"]
WEEKDAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
SEASONS = ["winter", "spring", "summer", "autumn"]
LABELS_TO_COVER = 10          # the other 5 month cells and the other 5 date cells


@dataclass(frozen=True)
class Cell:
    icon: str
    bg: str
    kind: str = "weather"     # weather | month | date
    label: str = ""
    today: bool = False

    def shows(self, symbol: str) -> bool:
        return self.icon == symbol or self.bg == symbol


def parse_cell(text):
    icon, bg = text.split("/")
    return icon.strip().lower(), bg.strip().lower()


def rotate_cw(grid):
    """A grid (list of rows) turned a quarter turn clockwise."""
    return [list(row) for row in zip(*grid[::-1])]


def card_face(cards, code):
    """Weather Card face ``code`` = card * 2 + face, as a 2x3 grid of (icon, bg)."""
    cells = cards["weather"][code // 2]["ab"[code % 2]]
    flat = [parse_cell(t) for t in cells]
    return [flat[0:3], flat[3:6]]


def season(month, day, rule):
    if rule == "meteorological":
        return SEASONS[(month % 12) // 3]
    # astronomical: the season changes on MAR 20, JUN 21, SEP 22, DEC 21
    if (month, day) >= (12, 21) or (month, day) < (3, 20):
        return "winter"
    if (month, day) < (6, 21):
        return "spring"
    if (month, day) < (9, 22):
        return "summer"
    return "autumn"


class Game:
    def __init__(self, cards, rules, seed, game):
        self.cards = cards
        self.rules = rules
        month, day, wd = rules["month"], rules["day"], rules["weekday"]
        label = str(day)
        if rules["holiday"] != "none" and rules["use_holiday"]:
            label = rules["holiday"]
        # Week face: today's date in its range; Day face: today's season and weekday
        week = next(w for w in cards["week"] if w["dates"][0] <= day <= w["dates"][1])
        sea = season(month, day, rules["seasons"])
        dayf = next(d for d in cards["day"] if d["season"] == sea and WEEKDAYS[wd] in d["weekdays"])
        slot = dayf["arrows"][WEEKDAYS[wd]] if "arrows" in dayf else dayf["arrow"]
        self.pattern_symbol = week["symbols"][slot]
        sc = dayf["score"]
        self.score_kind = sc["kind"]
        self.score_symbol = self.pattern_symbol if sc.get("symbol", "arrow") == "arrow" else sc["symbol"]
        self.points = sc.get("points", 1)
        self.pattern = [(r, c) for r, line in enumerate(dayf["pattern"])
                        for c, ch in enumerate(line) if ch == "#"]
        # Month and Date faces, laid as the Week Card's diagram shows
        self.map = {}
        month_face = next(f for f in "ab" if any(t.split()[0].upper() == MONTHS[month - 1]
                                                  for t in cards["month"][f]))
        self.lay_label_face(cards["month"][month_face], 0, 0, "month", MONTHS[month - 1])
        dr, dc = week["date_card_at"]
        for dcard in cards["date"]:
            for f in "ab":
                if any(t.split()[0].lower() == label for t in dcard[f]):
                    self.lay_label_face(dcard[f], dr, dc, "date", label)
        self.today = [p for p, cell in self.map.items() if cell.today]
        # deal: shuffle (DEAL stream, round 0), then one coin per card in deck order
        deal = Stream(seed, game, DEAL, 0)
        order = list(range(6))
        deal.shuffle(order)
        faces = [deal.below(2) if rules["flips"] == "coin" else 0 for _ in order]
        self.deck = [card * 2 + face for card, face in zip(order, faces)]
        self.hand = [self.deck[0], self.deck[1]]
        self.next = 2
        self.seat = Stream(seed, game, SEAT, 0)
        self.turned = {}          # (card code, rotation) -> the turned face's cells
        self.placed = self.discards = self.stuck = self.covered_cells = 0
        self.options = self.decisions = self.took_win = 0

    def lay_label_face(self, face, r0, c0, kind, today_label):
        for k, text in enumerate(face):
            lab, cell = text.split(None, 1)
            icon, bg = parse_cell(cell)
            lab = lab.lower()
            self.map[(r0 + k // 3, c0 + k % 3)] = Cell(icon, bg, kind, lab, lab == today_label.lower())

    # ---------------------------------------------------------------- placement rules
    def cards_left(self):
        return sum(1 for c in self.hand if c >= 0) + (6 - self.next)

    def footprint(self, code, rot, ar, ac):
        if (code, rot) not in self.turned:
            grid = card_face(self.cards, code)
            for _ in range(rot):
                grid = rotate_cw(grid)
            self.turned[(code, rot)] = [(i, j, Cell(*grid[i][j])) for i in range(len(grid))
                                        for j in range(len(grid[0]))]
        return {(ar + i, ac + j): cell for i, j, cell in self.turned[(code, rot)]}

    def legal(self):
        """All legal placements (slot, rot, row, col), sorted: some card cell lands on a visible
        cell with the same icon and background, and no card cell lands on today's cells."""
        out = set()
        for slot, code in enumerate(self.hand):
            if code < 0:
                continue
            # a face that looks the same turned 180 degrees: rotations 2 and 3 would give the
            # same maps as 0 and 1 at the same anchors, so they are not separate options
            grid = card_face(self.cards, code)
            alike = rotate_cw(rotate_cw(grid)) == grid
            for rot in range(2 if alike else 4):
                self.footprint(code, rot, 0, 0)
                for i, j, cell in self.turned[(code, rot)]:
                    for (r, c), under in self.map.items():
                        if (under.icon, under.bg) == (cell.icon, cell.bg):
                            fp = self.footprint(code, rot, r - i, c - j)
                            if not any(p in fp for p in self.today):
                                out.add((slot, rot, r - i, c - j))
        return sorted(out)

    def place(self, option):
        slot, rot, ar, ac = option
        fp = self.footprint(self.hand[slot], rot, ar, ac)
        self.covered_cells += sum(1 for p in fp if p in self.map)
        self.map.update(fp)
        self.placed += 1
        self.refill(slot)

    def refill(self, slot):
        if self.next < 6:
            self.hand[slot] = self.deck[self.next]
            self.next += 1
        else:
            self.hand[slot] = -1

    def copy(self):
        g = object.__new__(Game)
        g.__dict__.update(self.__dict__)
        g.map = dict(self.map)
        g.hand = list(self.hand)
        return g

    # ---------------------------------------------------------------- end of game
    def labels_visible(self, kind):
        return sum(1 for c in self.map.values() if c.kind == kind and not c.today)

    def groups(self, cells):
        """4-connected groups of a set of positions, as a list of sets."""
        left = set(cells)
        out = []
        while left:
            stack = [left.pop()]
            comp = set(stack)
            while stack:
                r, c = stack.pop()
                for q in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
                    if q in left:
                        left.remove(q)
                        comp.add(q)
                        stack.append(q)
            out.append(comp)
        return out

    def pattern_present(self):
        cells = {p for p, c in self.map.items() if c.shows(self.pattern_symbol)}
        shapes = []
        for mirror in (False, True):
            pts = [(r, -c if mirror else c) for r, c in self.pattern]
            for _ in range(4):
                pts = [(c, -r) for r, c in pts]
                shapes.append(pts)
        for shape in shapes:
            for (r0, c0) in cells:
                # anchor the shape's first cell on each candidate cell
                dr, dc = r0 - shape[0][0], c0 - shape[0][1]
                if all((r + dr, c + dc) in cells for r, c in shape):
                    return True
        return False

    def requirements(self):
        """[date ok, month ok, pattern ok, connected ok] in the rulebook's order."""
        return [self.labels_visible("date") == 0, self.labels_visible("month") == 0,
                self.pattern_present(), len(self.groups(self.map)) == 1]

    def measure(self):
        cells = {p for p, c in self.map.items() if c.shows(self.score_symbol)}
        kind = self.score_kind
        if kind == "groups":
            return len(self.groups(cells))
        if kind == "largest_group":
            return max((len(g) for g in self.groups(cells)), default=0)
        if kind == "border":
            return sum(1 for (r, c) in cells
                       if any(q not in self.map for q in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1))))
        steps = {"row": [(0, 1)], "column": [(1, 0)], "diagonal": [(1, 1), (1, -1)]}[kind]
        best = 0
        for sr, sc in steps:
            for (r, c) in cells:
                n = 0
                while (r + n * sr, c + n * sc) in cells:
                    n += 1
                best = max(best, n)
        return best

    # ---------------------------------------------------------------- policies
    def wins_with(self, option):
        g = self.copy()
        g.place(option)
        return (g.cards_left() == 0 and g.labels_visible("date") == 0
                and g.labels_visible("month") == 0 and all(g.requirements()))

    def progress(self):
        """Greedy's ranking of a map, larger is better."""
        req = self.requirements()
        won = all(req) and self.cards_left() == 0
        return (won, LABELS_TO_COVER - self.labels_visible("date") - self.labels_visible("month"),
                req[2], -len(self.groups(self.map)), self.measure())

    def winning(self, legal):
        if not self.rules["take_win"] or self.cards_left() != 1:
            return []
        return [o for o in legal if self.wins_with(o)]

    def choose(self, policy, legal):
        wins = self.winning(legal)
        if wins:
            self.took_win += 1
        if policy == "random":
            pool = wins or legal
            return pool[self.seat.below(len(pool))]
        pool = wins or legal
        keys = []
        for o in pool:
            g = self.copy()
            g.place(o)
            keys.append(g.progress())
        best = max(keys)
        tied = [o for o, k in zip(pool, keys) if k == best]
        if policy == "greedy-first":          # the solver's first line: no draw, first tie
            return tied[0]
        return tied[self.seat.below(len(tied))]


def play(cards, rules, seed, game, policy="random", restriction=None):
    """The result row: score, place, winners, length, flags, decisions, counters.
    policy: random | greedy | greedy-first (greedy with ties to the first option, no draws).
    ``restriction`` (a test's restated restricted play): ``options(legal)`` cuts the placements,
    ``placed(o)`` sees the one taken, ``counts()`` gives (forbidden, yielded) for the row."""
    g = Game(cards, rules, seed, game)
    failed_stuck = False
    while g.cards_left() > 0:
        legal = g.legal()
        if not legal:
            g.stuck += 1
            if rules["stuck"] == "discard":
                g.discards += 1
                g.refill(0 if g.hand[0] >= 0 else 1)
                continue
            failed_stuck = True
            break
        if restriction is not None:
            legal = restriction.options(legal)
        g.options += len(legal)
        g.decisions += 1
        o = g.choose(policy, legal)
        if restriction is not None:
            restriction.placed(o)
        g.place(o)
    req = g.requirements()
    win = all(req) and not failed_stuck
    m = g.measure()
    score = m * g.points if win else 0
    labels_left = g.labels_visible("date") + g.labels_visible("month")
    counters = [int(not ok) for ok in req] + [
        g.stuck, g.placed, g.discards, g.covered_cells, LABELS_TO_COVER - labels_left,
        len(g.map), g.options, g.took_win, 0, 0, 0, m, 0, 0,
        *(restriction.counts() if restriction is not None else (0, 0))]  # restriction counters
    return [score, 1, int(win), g.placed, 0, g.decisions] + counters
