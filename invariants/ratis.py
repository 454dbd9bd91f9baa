"""Invariants over Ratis replication state, shared by the Ratis-level seed specs.

Indices are Ratis indices: 0-based, -1 for "none".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def can_notify(follower_next: int, log_start: int) -> bool:
    """CanNotify: leader back-off reaches ``follower_next - 1`` at the lowest, so the
    leader eventually notifies the follower to install a snapshot iff that is below
    the start of its log."""
    return follower_next - 1 < log_start


def can_clear(
    install_in_progress_index: int, next_index: int, log_start: int, follower_next: int
) -> bool:
    """CanClear: the leader will send a notification (now, or after back-off) that
    passes Ratis' ``inProgressIndex <= first`` precondition, so the pending install
    can be applied or cleared."""
    notifies = next_index < log_start or can_notify(follower_next, log_start)
    return notifies and install_in_progress_index <= log_start


def no_stuck_install_in_progress(
    install_in_progress_index: int,
    installed_pending: int,
    snapshot_null: bool,
    follower_leader: Any,
    follower_term: int,
    leader: Any,
    term: int,
    next_index: Mapping[Any, int],
    log_start: Mapping[Any, int],
    follower_next: int,
) -> bool:
    """NoStuckInstallInProgress (HDDS-16932): the follower's side of an install is
    finished, it follows the real leader, the index is still set, and that leader can
    never send a notification that clears it: every append is rejected forever."""
    stuck = (
        install_in_progress_index != -1
        and (installed_pending >= 0 or snapshot_null)
        and follower_leader == leader
        and follower_term == term
        and not can_clear(
            install_in_progress_index, next_index[leader], log_start[leader], follower_next
        )
    )
    return not stuck


def next_index_for_inconsistency(
    request_first_index: int, reply_next_index: int, match_index: int
) -> int:
    """LogAppenderBase.getNextIndexForInconsistency: the leader's new nextIndex after an
    INCONSISTENCY reply."""
    nxt = reply_next_index
    if match_index + 1 > nxt and match_index + 1 != request_first_index:
        nxt = match_index + 1
    if nxt == request_first_index and nxt > 0:
        nxt -= 1
    return nxt


def match_index_sound(match_index: int, follower_covered: int) -> bool:
    """MatchIndexSound: the leader's matchIndex for a follower never exceeds the highest
    index at which the follower's state (log or snapshot) agrees with the leader's log."""
    return match_index <= follower_covered
