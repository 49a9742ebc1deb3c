"""The Mini App: the page inside Telegram that shows what Stepwise holds for its user and lets them change it
(docs/app.md). Only the App function imports this package."""
