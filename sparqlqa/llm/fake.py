"""A scripted LLM for tests: answers come from a queue, requests are recorded.

>>> llm = FakeLLM([{"answer": "Paris"}, lambda request: request.messages[-1].content.upper()])
>>> llm.complete("Capital?", schema={"type": "object"}).data
{'answer': 'Paris'}
>>> llm.complete("shout").text
'SHOUT'
>>> len(llm.requests)
2
"""

from __future__ import annotations

__all__ = ["FakeLLM"]

import json
import threading
from collections import deque
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, ClassVar

from sparqlqa.errors import LLMError
from sparqlqa.llm.base import LLM, LLMOptions, LLMRequest, LLMResponse, llms

if TYPE_CHECKING:
    from sparqlqa.llm.cache import LLMCache

#: a queued answer: text, a JSON object/array (becomes ``data``), a function of the
#: request returning either, or an exception to raise
FakeAnswer = str | dict[str, Any] | list[Any] | Callable[[LLMRequest], Any] | BaseException


@llms.register("fake")
class FakeLLM(LLM):
    """Answers from a queue; counts words as tokens so accounting can be tested."""

    test_only: ClassVar[bool] = True  # not offered in hints
    default_model: ClassVar[str | None] = "fake"

    def __init__(
        self,
        answers: Iterable[FakeAnswer] = (),
        *,
        model: str | None = None,
        options: LLMOptions | None = None,
        cache: LLMCache | None = None,
        cache_mode: str | None = None,
    ) -> None:
        super().__init__(model, options=options, cache=cache, cache_mode=cache_mode)
        self._answers: deque[FakeAnswer] = deque(answers)
        self._lock = threading.Lock()
        self.requests: list[LLMRequest] = []

    @classmethod
    def from_spec(cls, rest: str | None, **kwargs: Any) -> LLM:
        """``fake`` or ``fake:MODEL``: an empty queue (push answers before calling)."""
        return cls((), model=rest or None, **kwargs)

    def push(self, *answers: FakeAnswer) -> FakeLLM:
        """Queue more answers (returns self for chaining)."""
        with self._lock:
            self._answers.extend(answers)
        return self

    @property
    def remaining(self) -> int:
        """How many queued answers are left."""
        return len(self._answers)

    def _complete(self, request: LLMRequest) -> LLMResponse:
        with self._lock:
            self.requests.append(request)
            if not self._answers:
                raise LLMError(
                    f"FakeLLM has no answer queued for the prompt {request.prompt_preview()!r}",
                    hint="queue answers with FakeLLM([...]) or fake.push(...) before calling",
                )
            answer = self._answers.popleft()
        if isinstance(answer, BaseException):
            raise answer
        if callable(answer):
            answer = answer(request)
        return self._response(request, answer)

    def _response(self, request: LLMRequest, answer: Any) -> LLMResponse:
        if isinstance(answer, (dict, list)):
            text, data = json.dumps(answer, ensure_ascii=False), answer
        elif isinstance(answer, str):
            text, data = answer, None
        else:
            raise LLMError(f"FakeLLM answers must be str, dict or list, not {type(answer).__name__}")
        prompt_words = sum(_words(m.content) for m in request.messages) + _words(request.system or "")
        return self.make_response(request, text, data, input_tokens=prompt_words,
                                  output_tokens=_words(text), cost_usd=0.0)


def _words(text: str) -> int:
    return len(text.split())
