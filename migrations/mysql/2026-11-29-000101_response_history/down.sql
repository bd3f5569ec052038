DROP TABLE response_history;
