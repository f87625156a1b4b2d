"""Example performers for Tsumugi: the bodies behind the performer Worker of services/performers."""

from tsumugi_examples.boom import BOOM_ERROR, Boom
from tsumugi_examples.greetings import GreetingsInput, ListNames, ReportGreetings, greetings
from tsumugi_examples.hello import Hello, HelloPayload
from tsumugi_examples.mail_sink import MailSink, SentMail, SinkAnswer
from tsumugi_examples.notices import FailureNotice, NotifyFailure, NotifySettled, SettledNotice
from tsumugi_examples.order import Charge, Order, OrderPayload
from tsumugi_examples.send_mail import Mail, SendMail
from tsumugi_examples.slow import Slow, SlowCancelledError, SlowPayload

__all__ = [
    "BOOM_ERROR",
    "Boom",
    "Charge",
    "FailureNotice",
    "GreetingsInput",
    "Hello",
    "HelloPayload",
    "ListNames",
    "Mail",
    "MailSink",
    "NotifyFailure",
    "NotifySettled",
    "Order",
    "OrderPayload",
    "ReportGreetings",
    "SendMail",
    "SentMail",
    "SettledNotice",
    "SinkAnswer",
    "Slow",
    "SlowCancelledError",
    "SlowPayload",
    "greetings",
]
