-- The users first: a click joins the level its user has when the click is processed.
INSERT INTO users (userid, level) VALUES ('alice', 'Platinum');
INSERT INTO users (userid, level) VALUES ('bob', 'Silver');
