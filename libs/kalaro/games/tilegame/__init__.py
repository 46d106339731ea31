"""What the tile games (Mahjong, Ka Wu Xing) share, written once.

Ka Wu Xing began as a copy of Mahjong's engine, and the two still play the same table
flow: draw from the front of the wall and replacements from the back, discard, a call
window where every seat that may claim the discard answers privately and the best claim
is served (win, then kong, then pong or chow; nearest after the discarder first), kongs
declared concealed or added to a pong (which others may rob with a win), the next turn,
and the wall running out. Modules: ``table`` (sorted-hand helpers, the state protocol
the flow works on, a game's ``Table``), ``flow`` (the deal, whose move it is, the turn,
kongs, wall out), ``calls`` (the call window and time-outs), ``events`` (the events both
games have alike, and their base), ``state`` (``Phase`` and ``Timer``), ``views`` (the
view fields both games fill alike).

Each game keeps its own vocabulary (kang or kong, Mahjong or win), its own State
Structs and event union (their tags and fields are a wire and storage format), its
hands, scoring and options. It hands the shared flow a ``table.Table`` of its classes
and facts, and hook functions for the steps that differ (who wins on a tile, how a
claimed meld is built). Everything stays pure: state in, new state and events out.
Rules are added here only when both games play them the same way.
"""
