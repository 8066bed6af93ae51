from django.core.management.base import BaseCommand

from annotations.guidelines import DEFAULT_FILES, load_guidelines


class Command(BaseCommand):
    help = (
        "Install the shipped review guidelines (annotations/guidelines/default_*.md), one per UI language. "
        "Guidelines an admin has saved are never overwritten."
    )

    def handle(self, *args, **options):
        for language, outcome in load_guidelines().items():
            self.stdout.write(f"  {language:<8} {outcome:<8} ({DEFAULT_FILES[language].name})")
