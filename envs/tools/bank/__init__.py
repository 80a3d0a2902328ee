"""The bank domain: one seeded customer world, its phrasing, its contracts and its backend.

Two suites are configurations of it: `tools-bank` (`domain`: four tools, slots, faults) and
`bank-disputes` (`disputes`: the seed's case, `open_dispute` alone, one message, no faults).
"""
