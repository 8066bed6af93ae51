"""Print reviewer agreement (decisions and rubric keep/drop): per pair and overall."""

from django.core.management.base import BaseCommand

from annotations.agreement import format_statistic, krippendorff_alpha_nominal, pairwise, ratings_from_reviews
from annotations.selectors import submitted_reviews


class Command(BaseCommand):
    help = "Agreement between reviewers: percent agreement and Cohen's kappa per pair, Krippendorff's alpha."

    def handle(self, *args, **options):
        decisions, rubric = ratings_from_reviews(submitted_reviews())
        for title, ratings in (("decisions (approve/reject)", decisions), ("rubric items (keep/drop)", rubric)):
            self.stdout.write(f"{title}: {len(ratings)} units")
            self.stdout.write(f"  {'reviewer A':<20} {'reviewer B':<20} {'n':>5} {'agree %':>8} {'kappa':>7}")
            for p in pairwise(ratings):
                pct, kappa = format_statistic(p.percent, percent=True), format_statistic(p.kappa)
                self.stdout.write(f"  {p.rater_a!s:<20} {p.rater_b!s:<20} {p.n:>5} {pct:>8} {kappa:>7}")
            alpha = format_statistic(krippendorff_alpha_nominal(ratings))
            self.stdout.write(f"  Krippendorff's alpha (nominal): {alpha}")
