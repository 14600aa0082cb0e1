"""The search room: lexical search and fusion, links and entities, the recall a prompt hook asks for,
and evaluation."""
