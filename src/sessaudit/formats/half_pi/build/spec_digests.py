"""The builder's default `Digests`: spec §6's digests as formats/half_pi/spec/*_digests.py compute them, so a
built store carries exactly the digests Half-Pi would write."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from sessaudit.formats.half_pi.build.parts import BackgroundStart, JsonValue, SourceMessage
from sessaudit.formats.half_pi.spec import approval_digests, compaction_digests


class SpecDigests:
    """`Digests` on the real §6 implementation."""

    def local_args(self, tool: str, args: Mapping[str, JsonValue]) -> str:
        return approval_digests.local_approval_digest(tool, args)

    def remote_args(
        self,
        run_id: str,
        hand_id: str,
        tool: str,
        args: Mapping[str, JsonValue],
        background: BackgroundStart | None,
    ) -> str:
        runtime = background.max_runtime_ms if background is not None else None
        return approval_digests.remote_approval_digest(run_id, hand_id, tool, args, runtime)

    def text(self, text: str) -> str:
        return approval_digests.text_digest(text)

    def summary(self, summary: str) -> str:
        return compaction_digests.summary_digest(summary)

    def source(self, session_id: str, to_seq: int, messages: Sequence[SourceMessage]) -> str:
        return compaction_digests.source_digest(
            session_id, to_seq, [dataclasses.asdict(message) for message in messages]
        )

    def contract(self, source_digest: str, *fields: str) -> str:
        """`fields`: projection, policy version, profile, generation mode, parent id, generation key."""
        projection, policy, profile, mode, parent, key = fields
        return compaction_digests.contract_digest(
            source_digest, projection, policy, profile, mode, parent, key
        )
