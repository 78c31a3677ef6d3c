"""SASL/OAUTHBEARER with unsecured tokens (Kafka's default validator) on a SASL_PLAINTEXT listener.

Clients: confluent-kafka (librdkafka 2.0.2 makes its own unsecured token from
`sasl.oauthbearer.config`), and raw SaslHandshake/SaslAuthenticate for what no client shows.
"""

import base64
import json
import time

import pytest
from confluent_kafka import KafkaError

import ck_helpers as ck
import kafka_wire as kw
from harness import unique_topic, wait_until
from test_acls import oxbow_acl
from test_sasl import SASL, SASL_AUTHENTICATION_FAILED, ClientErrors, authenticate, handshake, make_producer

AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
REAUTH_MS = 60000


def oauth_conf(principal, **extra):
    conf = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "OAUTHBEARER",
            "enable.sasl.oauthbearer.unsecure.jwt": True, "sasl.oauthbearer.config": f"principal={principal}"}
    conf.update(extra)
    return conf


def unsecured_token(claims, header=None):
    part = lambda obj: base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()
    return f"{part(header or {'alg': 'none'})}.{part(claims)}."


def client_first(token):
    return f"n,,\x01auth=Bearer {token}\x01\x01".encode()


@pytest.fixture
def oauth_broker(make_broker):
    def factory(overrides=None):
        merged = {"sasl.enabled.mechanisms": "PLAIN,OAUTHBEARER", "authorizer.class.name": AUTHORIZER,
                  "super.users": "User:ANONYMOUS", "connections.max.reauth.ms": str(REAUTH_MS)}
        merged.update(overrides or {})
        b = make_broker(merged, start=False)
        b.add_listener(SASL)
        return b.start()

    return factory


def test_the_tokens_subject_is_the_principal(oauth_broker):
    broker = oauth_broker()
    bootstrap = broker.listener_bootstrap(SASL)
    topic = ck.create_topic(broker.bootstrap, unique_topic("oauth"))
    oxbow_acl(broker, "add", "--allow-principal", "User:alice", "--operation", "Write", "--topic", topic)

    def produce_as(principal):
        outcomes = []
        p = make_producer(bootstrap, oauth_conf(principal), error_cb=ClientErrors())
        p.produce(topic, value=principal.encode(), partition=0, on_delivery=lambda err, msg: outcomes.append(err))
        p.flush(30)
        return outcomes

    assert produce_as("alice") == [None]
    (denied,) = produce_as("bob")
    assert denied is not None and denied.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, denied
    msgs = ck.consume_partition(broker.bootstrap, topic, 0, 0, expected=1)
    assert [m.value() for m in msgs] == [b"alice"]


def test_bad_tokens_are_refused_and_the_session_ends_with_the_token(oauth_broker):
    broker = oauth_broker()
    port = broker.extra_listeners[SASL]
    now = time.time()
    cases = [
        (unsecured_token({"sub": "alice", "exp": now - 10}), "expired"),
        (unsecured_token({"exp": now + 60}), "'sub'"),
        (unsecured_token({"sub": "alice", "exp": now + 60}, header={"alg": "RS256"}), "alg"),
        ("not.a-token", "unsecured JWS"),
    ]
    for token, needle in cases:
        with kw.Conn(port) as c:
            assert handshake(c, "OAUTHBEARER")[0] == 0
            res = authenticate(c, client_first(token))
            assert res["error"] == SASL_AUTHENTICATION_FAILED and needle in res["message"], (token, res)
            assert c.wait_closed_or_response(10) == "closed"
    wait_until(lambda: "invalid OAUTHBEARER token" in broker.log_text(), 10, message="an audit line")

    # A token that expires in 10 s ends the session then, before connections.max.reauth.ms.
    with kw.Conn(port) as c:
        assert handshake(c, "OAUTHBEARER")[0] == 0
        res = authenticate(c, client_first(unsecured_token({"sub": "alice", "exp": time.time() + 10})))
        assert res["error"] == 0, res
        assert 8000 < res["session_lifetime_ms"] <= 10000, res
    with kw.Conn(port) as c:
        assert handshake(c, "OAUTHBEARER")[0] == 0
        res = authenticate(c, client_first(unsecured_token({"sub": "alice", "exp": time.time() + 3600})))
        assert res["error"] == 0 and res["session_lifetime_ms"] == REAUTH_MS, res


def test_a_token_validator_of_its_own_is_refused_at_start(make_broker):
    b = make_broker({"sasl.enabled.mechanisms": "OAUTHBEARER",
                     "listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class":
                         "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"},
                    start=False)
    b.add_listener(SASL)
    with pytest.raises(pytest.fail.Exception):
        b.start()
    assert "validates only unsecured tokens" in b.log_text()
