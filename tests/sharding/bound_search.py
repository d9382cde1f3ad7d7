#!/usr/bin/env python3
"""Checks the per-element rules of any_plan_bound (tests/sharding/redistribute_plan.cpp) against
the fewest messages a breadth-first search finds, on random small instances: a few ranks, each
holding one of g partial values of an element (a class) or nothing, and a target (ranks that
need the result, or reduction groups that together must hold it). The search relaxes the
problem (a rank's information is the set of classes it has heard of, and a message passes all
of it), so its optimum is at most the real one: a rule above it would not be a bound.
Usage: python3 tests/sharding/bound_search.py   (not part of ctest; prints one line)"""
import random
from collections import deque


def fewest_messages(cls, g, done):
    start = tuple((1 << c) if c >= 0 else 0 for c in cls)
    seen = {start: 0}
    queue = deque([start])
    while queue:
        s = queue.popleft()
        if done(s):
            return seen[s]
        for u, info in enumerate(s):
            for v in range(len(s)):
                if v != u and info and s[v] | info != s[v]:
                    t = s[:v] + (s[v] | info,) + s[v + 1:]
                    if t not in seen:
                        seen[t] = seen[s] + 1
                        queue.append(t)
    raise RuntimeError("unreachable target")


def rule_without_partial(cls, g, targets):
    if g == 1:
        return sum(cls[r] < 0 for r in targets)
    return (g - 1) + len(targets) - 1


def rule_partial_target(cls, g, groups):
    lacking, lacked = 0, set()
    for group in groups:
        missing = set(range(g)) - {cls[r] for r in group}
        lacking += bool(missing)
        lacked |= missing
    return max(lacking, len(lacked))


def main():
    rng = random.Random(20261128)
    instances = above = tight = 0
    for _ in range(3000):
        n, g = rng.choice([3, 4, 5]), rng.choice([1, 2, 3, 4])
        if g > n:
            continue
        ranks = rng.sample(range(n), n)
        cls = [-1] * n
        for i, r in enumerate(ranks):  # every class held, the other ranks any class or none
            cls[r] = i if i < g else rng.choice([-1] + list(range(g)))
        full = (1 << g) - 1
        if rng.random() < 0.5:
            targets = rng.sample(range(n), rng.randint(1, n))
            rule = rule_without_partial(cls, g, targets)
            best = fewest_messages(cls, g, lambda s: all(s[r] == full for r in targets))
        else:
            members = rng.sample(range(n), rng.randint(1, n))
            k = rng.randint(1, len(members))
            groups = [members[i::k] for i in range(k)]

            def covered(s):
                for group in groups:
                    union = 0
                    for r in group:
                        union |= s[r]
                    if union != full:
                        return False
                return True

            rule = rule_partial_target(cls, g, groups)
            best = fewest_messages(cls, g, covered)
        instances += 1
        above += rule > best
        tight += rule == best
    print(f"{instances} instances: the rule above the fewest messages on {above}, equal on {tight}")
    return 1 if above else 0


if __name__ == "__main__":
    raise SystemExit(main())
