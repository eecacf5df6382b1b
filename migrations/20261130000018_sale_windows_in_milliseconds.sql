-- A sale's window to the millisecond, as the code now writes it (domain::SaleWindow, the end
-- an admin gives): Redis keeps the window in milliseconds, and the admins' pages page through
-- sales by a cursor of the start in milliseconds and the ID, so a start finer than that (a
-- REST client's `.000500Z`, an end that moved the start to `now() - 1ms`) had the next page
-- skip every sale starting in that millisecond. Rows written before are cut the same way.
UPDATE vouchers
SET begins_at = date_trunc('milliseconds', begins_at),
    ends_at = date_trunc('milliseconds', ends_at)
WHERE begins_at <> date_trunc('milliseconds', begins_at)
   OR ends_at <> date_trunc('milliseconds', ends_at);
