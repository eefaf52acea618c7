"""French (spaCy + word lists), German and Swedish (word lists) rules."""
import pytest
from feature_cases import assert_detects

CASES = [
    ("fr", "Negation", "Le chat n'était pas assis.", "Le chat était assis."),
    ("fr", "Negation", "Il part sans argent.", "Il part avec de l'argent."),
    ("fr", "Double negation", "Il ne sera pas impossible de gagner.", "Il sera impossible de gagner."),
    ("fr", "Morphological negation", "Cette décision est irréversible.", "Cette décision est importante."),
    ("fr", "Quantifiers", "La plupart des diplômés sont partis.", "Les diplômés sont partis."),
    ("fr", "Factivity", "Joan sait que Paul est parti.", "Joan est partie."),
    ("fr", "Named entities", "Emmanuel Macron a visité Berlin.", "Le président a visité la ville."),
    ("fr", "Intervals/Numbers", "Il a acheté trois pommes.", "Il a acheté des pommes."),
    ("fr", "Temporal", "Elle est partie avant la réunion.", "Elle est partie de la réunion."),
    ("fr", "Conditionals", "S'il pleut, nous resterons.", "Il pleut, nous restons."),
    ("fr", "Conjunction", "Tom et Marie sont arrivés.", "Tom est arrivé."),
    ("fr", "Disjunction", "Tom ou Marie viendra.", "Tom viendra."),
    ("fr", "Prepositional phrases", "Le livre est sur la table.", "Le livre est rouge."),
    ("fr", "Anaphora/Coreference", "Marie dit qu'elle est fatiguée.", "Marie est fatiguée."),
    ("fr", "Relative clauses", "L'homme qui habite ici est médecin.", "L'homme est médecin."),
    ("fr", "Datives", "Il lui donne un livre.", "Il voit un livre."),
    ("de", "Negation", "Die Katze saß nicht auf der Matte.", "Die Katze saß auf der Matte."),
    ("de", "Negation", "Keiner ist gekommen.", "Alle sind gekommen."),
    ("de", "Double negation", "Das ist nicht unmöglich.", "Das ist unmöglich."),
    ("de", "Double negation", "Er hat nicht nichts gesagt.", "Er hat nichts gesagt."),
    ("de", "Quantifiers", "Die meisten Studenten bestanden.", "Der Student bestand."),
    ("de", "Factivity", "Anna weiß, dass Paul gegangen ist.", "Anna ist gegangen."),
    ("de", "Intervals/Numbers", "Er kaufte drei Äpfel.", "Er kaufte Äpfel."),
    ("de", "Temporal", "Sie ging, bevor das Treffen begann.", "Sie ging zum Treffen."),
    ("de", "Conditionals", "Wenn es regnet, bleiben wir.", "Es regnet, wir bleiben."),
    ("de", "Conjunction", "Tom und Maria kamen.", "Tom kam."),
    ("de", "Disjunction", "Tom oder Maria kommt.", "Tom kommt."),
    ("de", "Anaphora/Coreference", "Maria sagt, dass sie müde ist.", "Maria ist müde."),
    ("sv", "Negation", "Katten satt inte på mattan.", "Katten satt på mattan."),
    ("sv", "Negation", "Det var ett icke-ekologiskt val.", "Det var ett ekologiskt val."),
    ("sv", "Double negation", "Det är inte omöjligt.", "Det är omöjligt."),
    ("sv", "Quantifiers", "De flesta studenter klarade provet.", "Studenten klarade provet."),
    ("sv", "Factivity", "Anna vet att Paul har gått.", "Anna har gått."),
    ("sv", "Intervals/Numbers", "Han köpte tre äpplen.", "Han köpte äpplen."),
    ("sv", "Temporal", "Hon gick innan mötet började.", "Hon gick till mötet."),
    ("sv", "Conditionals", "Om det regnar stannar vi hemma.", "Vi talar om boken."),
    ("sv", "Conditionals", "Han får en bonus om resultatet är bra.", "Han skrev en bok om kriget."),
    ("sv", "Conjunction", "Tom och Maria kom.", "Tom kom."),
    ("sv", "Disjunction", "Tom eller Maria kommer.", "Tom kommer."),
    ("sv", "Anaphora/Coreference", "Maria sa att hon var trött.", "Maria var trött."),
]


@pytest.mark.parametrize("lang, feature, positive, negative", CASES)
def test_feature(lang, feature, positive, negative):
    assert_detects(lang, feature, positive, negative)
