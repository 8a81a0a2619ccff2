/**
 * @module
 * Word lists for synthetic memory data: names, cities, colours, allergens, time zones, and a content
 * vocabulary (about 600 common English words followed by a long tail of made-up but pronounceable
 * words), so text search terms range from very common to rare, as in real notes.
 */

const split = (s: string): string[] => s.trim().split(/\s+/);

export const FIRST_NAMES = split(`
alice bob carol david emma frank grace henry isla jack karen liam mia noah olivia peter quinn rosa sam tara
uma victor wendy xavier yara zane amir bianca chen diego elena farah gustavo hana ivan jamal kenji lucia
marta nikhil omar priya rafael sofia tomas ugo valentina wei ximena yusuf zoe aiko bruno camila dmitri esther
fatima giorgio helga ines joao kofi leila mateo nadia oscar paula rahul sara tariq ulla vera wanda yosef
aaron beatriz caleb daria eli freya gabriel harriet ibrahim julia kai lena marco nina owen pilar reza silvia
theo ursula vikram willa yvonne zara anders brigitte cyrus dalia emil fiona hugo irene joel klara lars maya
`);

export const LAST_NAMES = split(`
smith johnson garcia chen nguyen patel kim lopez muller rossi silva tanaka kowalski ivanov okafor haddad
andersson dubois schmidt novak cohen fischer moreau romano santos yamamoto park singh ali hassan murphy kelly
walsh obrien jensen nielsen larsen berg lindqvist virtanen horvath popescu petrov sokolov volkov costa ferreira
alves pereira mendes oliveira gonzalez rodriguez martinez hernandez perez sanchez ramirez torres flores rivera
gomez diaz reyes cruz morales ortiz gutierrez chavez ramos ruiz alvarez castillo jimenez moreno romero herrera
medina aguilar vargas castro fernandez mendoza guzman salazar soto delgado vega rios nakamura suzuki watanabe
ito sato kobayashi kato yoshida wang li zhang liu yang huang zhao wu zhou xu sun ma zhu hu guo lin he gao
`);

export const CITIES = split(`
lisbon porto madrid barcelona valencia seville paris lyon marseille berlin hamburg munich cologne vienna zurich
geneva milan rome naples turin amsterdam rotterdam brussels antwerp london manchester edinburgh dublin cork oslo
bergen stockholm gothenburg copenhagen helsinki tallinn riga vilnius warsaw krakow prague brno budapest
bucharest sofia athens istanbul ankara cairo nairobi lagos accra casablanca tunis johannesburg capetown dubai
doha riyadh tehran karachi lahore delhi mumbai bangalore chennai kolkata dhaka colombo kathmandu bangkok hanoi
saigon manila jakarta singapore kualalumpur taipei seoul busan tokyo osaka kyoto beijing shanghai shenzhen
sydney melbourne brisbane perth auckland wellington toronto montreal vancouver calgary chicago boston denver
seattle portland austin houston dallas miami atlanta phoenix mexico bogota lima quito santiago montevideo
`);

export const COLORS = split(`
red blue green yellow orange purple violet pink magenta cyan teal turquoise navy indigo maroon crimson scarlet
amber gold silver bronze beige ivory olive lime mint lavender lilac coral salmon peach charcoal black white grey
`);

export const ALLERGENS = split(`
peanuts walnuts almonds cashews hazelnuts pistachios shellfish shrimp crab lobster fish eggs milk lactose soy
wheat gluten sesame mustard celery lupin sulphites penicillin latex pollen dust mold cats dogs bees wasps
`);

export const TIMEZONES = split(`
europe/lisbon europe/london europe/paris europe/berlin europe/madrid europe/rome europe/warsaw europe/athens
europe/helsinki africa/cairo africa/lagos africa/nairobi asia/dubai asia/kolkata asia/bangkok asia/singapore
asia/shanghai asia/tokyo asia/seoul australia/sydney pacific/auckland america/new_york america/chicago
america/denver america/los_angeles america/sao_paulo america/mexico_city america/toronto
`);

/** Common content words, roughly most frequent first (no stop words: they are not searched for). */
export const COMMON_WORDS = split(`
coffee tea meeting project report email call office home work morning evening weekend monday friday team
client budget deadline review plan travel flight hotel train dinner lunch breakfast music book movie game
sport football tennis running cycling swimming yoga hiking garden kitchen recipe pasta pizza sushi salad soup
bread cheese wine beer water juice chocolate cake fruit apple banana orange lemon berry vegetables chicken
beef pork tofu rice noodles spicy sweet sour bitter quiet loud early late fast slow window aisle seat car bike
bus subway walk dog cat bird plant flower tree beach mountain lake river city village country island winter
summer spring autumn rain snow sun wind cold warm hot cool jazz rock classical pop podcast news history science
art design photo camera phone laptop tablet keyboard screen printer paper pen notebook calendar schedule
reminder task note list idea goal habit health doctor dentist gym diet sleep nap stress vacation holiday
birthday anniversary wedding party gift present card letter package delivery order shop market store mall
bank loan rent mortgage salary invoice receipt tax insurance contract lawyer account password login server
database backup release deploy bug feature ticket sprint standup demo launch customer partner vendor supplier
invoice shipping warehouse inventory pricing discount refund complaint feedback survey support chat language
spanish french german italian portuguese japanese chinese korean arabic hindi russian english dutch swedish
piano guitar violin drums singing dancing painting drawing knitting sewing woodwork pottery chess puzzle
crossword sudoku reading writing poetry novel fiction biography documentary series episode season concert
festival theater museum gallery exhibition zoo park playground school university college class course lesson
exam homework teacher student parent child baby brother sister mother father grandmother grandfather uncle
aunt cousin friend neighbour colleague manager boss intern mentor coach nurse engineer designer developer
architect chef baker farmer pilot driver artist writer editor analyst accountant consultant researcher
vegetarian vegan kosher halal organic local seasonal fresh frozen canned homemade takeaway delivery brunch
picnic barbecue grill oven stove fridge freezer microwave blender kettle mug cup glass plate bowl fork spoon
knife napkin blanket pillow sofa chair desk lamp shelf closet mirror carpet curtain balcony terrace roof
garage basement attic stairs elevator door key lock alarm heating cooling ventilation solar battery charger
cable adapter headphones speaker microphone webcam router wifi signal network storage cloud drive folder file
document spreadsheet slide presentation chart graph table figure draft version final approved pending
cancelled postponed urgent important optional weekly monthly quarterly yearly daily hourly annual
`);

const ONSETS = split('b c d f g h j k l m n p r s t v w z br ch cl cr dr fl gr kr pl pr sh st th tr');
const VOWELS = split('a e i o u a e i o u ai ee oa ou');
const CODAS = ['', '', '', 'n', 'r', 's', 'l', 'm', 'x', 'th', 'nd', 'rk', 'st'];

/**
 * The content vocabulary: `COMMON_WORDS` then `tail` made-up words (deterministic, distinct, 2-3
 * syllables), so a Zipf draw over it gives a head of real words and a long tail of rare ones.
 */
export function vocabulary(tail: number): string[] {
  const seen = new Set<string>(COMMON_WORDS);
  const out = [...seen];
  const want = out.length + tail;
  let i = 0;
  while (out.length < want && i < tail * 20) {
    let x = i++ * 2654435761;
    const pick = <T>(list: readonly T[]): T => {
      x = Math.imul(x ^ (x >>> 15), 2246822519) >>> 0;
      return list[x % list.length] as T;
    };
    const syllables = 2 + (i % 2);
    let w = '';
    for (let s = 0; s < syllables; s++) w += pick(ONSETS) + pick(VOWELS);
    w += pick(CODAS);
    if (!seen.has(w)) {
      seen.add(w);
      out.push(w);
    }
  }
  return out;
}
