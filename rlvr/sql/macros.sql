-- Answer normalisation shared by every verifier query (run once per connection).
-- lower-case, trim, unicode minus -> '-', drop thousands commas, '$', whitespace, a leading '+'
-- and a trailing '.'; '19.' -> '19', '$1,200' -> '1200', ' −3 ' -> '-3'.
CREATE OR REPLACE MACRO norm_answer(s) AS
    regexp_replace(
        regexp_replace(
            replace(replace(replace(replace(lower(trim(s)), '−', '-'), ',', ''), '$', ''), ' ', ''),
            '^\+', ''),
        '\.$', '');
