-- Clicks, and four attempts with card 4111 within one 5-second window (their event times, in
-- ROWTIME, 100 ms apart) and one with another card.
INSERT INTO clickstream (userid, page, action) VALUES ('alice', '/checkout', 'buy');
INSERT INTO clickstream (userid, page, action) VALUES ('bob', '/home', 'view');
INSERT INTO authorization_attempts (ROWTIME, card_number, amount) VALUES (1767225600000, '4111', 10.0);
INSERT INTO authorization_attempts (ROWTIME, card_number, amount) VALUES (1767225600100, '4111', 12.5);
INSERT INTO authorization_attempts (ROWTIME, card_number, amount) VALUES (1767225600200, '4111', 99.0);
INSERT INTO authorization_attempts (ROWTIME, card_number, amount) VALUES (1767225600300, '4111', 5.0);
INSERT INTO authorization_attempts (ROWTIME, card_number, amount) VALUES (1767225600400, '5500', 20.0);
