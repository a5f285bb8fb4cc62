"""The multiplayer web server: accounts, rooms, tables over websockets, history, replays and
ratings, with a browser UI shipped as static files (``guandan serve``)."""
