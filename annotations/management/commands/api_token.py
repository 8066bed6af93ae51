"""Print the API token of a user, creating it on first use (``--reset`` replaces it)."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from rest_framework.authtoken.models import Token


class Command(BaseCommand):
    help = "Print USER's API token (created if missing). Scripts send it as 'Authorization: Token <key>'."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--reset", action="store_true", help="revoke the current token and print a new one")

    def handle(self, *args, username: str, reset: bool, **options):
        User = get_user_model()
        try:
            user = User.objects.get(**{User.USERNAME_FIELD: username})
        except User.DoesNotExist:
            raise CommandError(f"no user named {username!r}") from None
        if not user.is_active:
            raise CommandError(f"user {username!r} is inactive: an inactive user's token is refused anyway")
        with transaction.atomic():
            if reset:
                Token.objects.filter(user=user).delete()
            token, _ = Token.objects.get_or_create(user=user)
        self.stdout.write(token.key)
