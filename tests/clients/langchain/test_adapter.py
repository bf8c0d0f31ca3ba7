"""The LangChain adapter in a small chain with a scripted chat model, against a live memorypr
over real HTTP: the history posts turns and proposes through the reference proposer, and the
retriever recalls what was merged."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, BaseMessage, ChatMessage, HumanMessage
from langchain_core.prompt_values import PromptValue
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import Runnable, RunnableLambda
from memorypr_client import AsyncMemoryprClient, MemoryprClient
from memorypr_langchain import MemoryprChatMessageHistory, MemoryprRetriever, ProposalRequest

from memorypr.audit.models import AuditEvent
from memorypr.facts.models import FactStatus, FactVersion
from memorypr.formation import MemoryprClient as FormationClient
from memorypr.formation import Proposal, Turn, propose
from memorypr.working_memory.models import SessionTurn

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def memory(server_url: str, agent_token: str) -> Iterator[MemoryprClient]:
    with MemoryprClient(server_url, agent_token, namespace="demo") as client:
        yield client


@pytest.fixture
def proposer(server_url: str, agent_token: str) -> Iterator[FormationClient]:
    with FormationClient(server_url, agent_token, namespace="demo") as client:
        yield client


def _reference_proposer(proposer: FormationClient) -> Any:
    """The wiring the adapter's README gives: the reference proposer over the posted turns."""

    def propose_turns(request: ProposalRequest) -> Proposal:
        return propose(
            client=proposer,
            subject=request.subject,
            session_id=request.session_id,
            turns=[Turn(t.role, t.content, t.timestamp_ms) for t in request.turns],
            post_turns=False,
        )

    return propose_turns


def _chain(retriever: MemoryprRetriever, model: FakeListChatModel, prompts: list[PromptValue]) -> Runnable:
    prompt = ChatPromptTemplate.from_messages(
        [
            ("system", "What you remember about the user, true now:\n{memories}"),
            MessagesPlaceholder("history"),
            ("human", "{question}"),
        ]
    )

    def seen(value: PromptValue) -> PromptValue:
        prompts.append(value)
        return value

    recall = RunnableLambda(lambda x: x["question"]) | retriever
    return (
        {
            "memories": recall | (lambda docs: "\n".join(d.page_content for d in docs) or "(nothing)"),
            "history": lambda x: x["history"],
            "question": lambda x: x["question"],
        }
        | prompt
        | RunnableLambda(seen)
        | model
    )


def test_a_chain_proposes_what_the_user_says_and_recalls_it_on_the_next_turn(memory, proposer):
    # given: a chat whose history lives in memorypr and proposes after each user turn
    subject, session_id = "u-lc", f"s-{uuid.uuid4().hex[:8]}"
    history = MemoryprChatMessageHistory(
        client=memory, session_id=session_id, subject=subject, propose=_reference_proposer(proposer)
    )
    retriever = MemoryprRetriever(client=memory, subject=subject, top_k=3)
    model = FakeListChatModel(responses=["Noted: Beijing.", "Try the Peking duck at Siji Minfu."])
    prompts: list[PromptValue] = []
    chain = _chain(retriever, model, prompts)

    def ask(question: str) -> BaseMessage:
        answer: BaseMessage = chain.invoke({"question": question, "history": history.messages})
        history.add_messages([HumanMessage(question), answer])
        return answer

    # when: the user says where they live
    first = ask("I live in Beijing.")
    # then: the turn was proposed by the reference proposer, approved and merged
    assert first.content == "Noted: Beijing."
    (proposal,) = history.proposals
    (op,) = proposal.diff.operations
    assert (op["action"], op["key"], op["newValue"]) == ("CREATE", "home_city", "Beijing")
    assert op["evidence"]["rawMessageQuote"] == "I live in Beijing."
    (decision,) = proposal.decisions
    assert (decision.review_status, decision.merge_status) == ("APPROVED", "MERGED")
    fact = FactVersion.objects.get(subject=subject, key="home_city", status=FactStatus.ACTIVE)
    assert fact.value == "Beijing" and str(fact.pull_id) == decision.pull_id
    assert AuditEvent.objects.filter(pull_id=fact.pull_id, event_type="pull.merged").count() == 1
    # when: the next turn asks something the memory answers
    second = ask("Where should I eat tonight near home?")
    # then: the retriever recalled the merged fact into the prompt the model was given, with
    # the first exchange as history
    assert second.content == "Try the Peking duck at Siji Minfu."
    system, *history_shown, question = prompts[1].to_messages()
    assert "home_city: Beijing" in system.text
    assert "home_city" not in prompts[0].to_messages()[0].text
    assert [m.text for m in history_shown] == ["I live in Beijing.", "Noted: Beijing."]
    # a question proposes nothing new
    assert history.proposals[1].diff.operations == []
    # and both exchanges are the session's working memory and its durable transcript
    assert [(type(m), m.text) for m in history.messages] == [
        (HumanMessage, "I live in Beijing."),
        (AIMessage, "Noted: Beijing."),
        (HumanMessage, "Where should I eat tonight near home?"),
        (AIMessage, "Try the Peking duck at Siji Minfu."),
    ]
    assert list(
        SessionTurn.objects.filter(session_id=session_id).order_by("pk").values_list("role", flat=True)
    ) == ["user", "assistant", "user", "assistant"]


def test_the_retriever_returns_active_facts_with_their_identity_and_provenance(
    memory, proposer, server_url, agent_token
):
    # given: Beijing, then an update to Shenzhen, both merged
    for session_id, said in (("s-r1", "I live in Beijing."), ("s-r2", "I moved to Shenzhen last month.")):
        made = propose(client=proposer, subject="u-r", session_id=session_id, turns=[Turn("user", said)])
        assert made.decisions[0].merged
    current = FactVersion.objects.get(subject="u-r", key="home_city", status=FactStatus.ACTIVE)
    retriever = MemoryprRetriever(client=memory, subject="u-r")
    # when
    (doc,) = retriever.invoke("Which city does the user live in?")
    # then: only the active version, saying what it replaced
    assert isinstance(doc, Document)
    assert (
        doc.page_content == "home_city: Shenzhen (updates an older memory: Beijing, which is no longer true)"
    )
    assert {k: doc.metadata[k] for k in ("key", "subject", "factId", "version", "kprId")} == {
        "key": "home_city",
        "subject": "u-r",
        "factId": current.pk,
        "version": 2,
        "kprId": str(current.pull_id),
    }
    assert doc.metadata["score"] > 0

    # and the same through the async client
    async def recall() -> list[Document]:
        async with AsyncMemoryprClient(server_url, agent_token, namespace="demo") as client:
            aretriever = MemoryprRetriever(client=memory, async_client=client, subject="u-r")
            return await aretriever.ainvoke("Which city does the user live in?")

    assert [d.metadata["factId"] for d in asyncio.run(recall())] == [current.pk]


def test_a_proposal_after_a_user_turn_reads_the_turn_before_it(memory):
    # given: an assistant question already in the session, and a history made afresh
    memory.add_turn("s-p", "assistant", "Do you like jazz?")
    requests: list[ProposalRequest] = []
    history = MemoryprChatMessageHistory(
        client=memory, session_id="s-p", subject="u-p", propose=requests.append
    )
    # when
    history.add_messages([HumanMessage("I love it."), AIMessage("Great!")])
    # then: one proposal, after the user turn, with the question it answers
    (request,) = requests
    assert (request.subject, request.session_id) == ("u-p", "s-p")
    assert [(t.role, t.content) for t in request.turns] == [
        ("assistant", "Do you like jazz?"),
        ("user", "I love it."),
    ]
    assert all(t.timestamp_ms > 0 for t in request.turns)


def test_a_failing_proposer_loses_no_turn_and_its_error_reaches_the_caller(memory):
    # given
    def broken(request: ProposalRequest) -> None:
        raise RuntimeError("extractor down")

    history = MemoryprChatMessageHistory(client=memory, session_id="s-f", subject="u-f", propose=broken)
    # when
    with pytest.raises(RuntimeError, match="extractor down"):
        history.add_messages([HumanMessage("I live in Oslo."), AIMessage("Noted.")])
    # then: both turns are in the session all the same
    assert [m.text for m in history.messages] == ["I live in Oslo.", "Noted."]


def test_a_message_memorypr_cannot_keep_is_refused_before_anything_is_posted(memory):
    # given
    history = MemoryprChatMessageHistory(client=memory, session_id="s-x", subject="u-x")
    # when
    with pytest.raises(ValueError, match="not 'chat'"):
        history.add_messages([HumanMessage("hello"), ChatMessage(role="narrator", content="meanwhile")])
    # then
    assert history.messages == []


def test_clearing_a_session_is_refused(memory):
    history = MemoryprChatMessageHistory(client=memory, session_id="s-c", subject="u")
    with pytest.raises(NotImplementedError):
        history.clear()


def test_the_adapter_imports_neither_django_nor_the_server():
    # given: a fresh interpreter with the adapter on its path
    probe = (
        "import sys, memorypr_langchain; "
        "print(sorted(m for m in ('django', 'memorypr', 'torch', 'celery') if m in sys.modules))"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    # when
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd="/")
    # then
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() == "[]"
