"""Ranked play (issue 34): ratings, the quick-play queue's table forming, fair-play signals.

This package is so far the pure core, no I/O: :mod:`services.ranked.ratings` rates a
ranked hand from its record, :mod:`services.ranked.matching` forms tables from the
queue, :mod:`services.ranked.fairplay` finds what admins should look at. The service
shell (store, endpoints, consumers) is built on these functions and passes them what
it has read; each is a plain function of its inputs, so it is tested without servers.
"""
