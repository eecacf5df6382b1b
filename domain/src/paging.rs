//! Pages of a list (the home page's cards, the console's rows): which page a `?page=` asks
//! for, and which items it holds.

use std::ops::Range;

/// One page of a list: its number (1 first), how many pages there are (at least 1) and the
/// items on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub number: usize,
    pub pages: usize,
    pub items: Range<usize>,
}

impl Page {
    /// The page `asked` of `total` items, `size` to a page (`size` at least 1); past the last
    /// page, the last one.
    pub fn of(total: usize, size: usize, asked: usize) -> Self {
        let size = size.max(1);
        let pages = total.div_ceil(size).max(1);
        let number = asked.clamp(1, pages);
        let start = (number - 1) * size;
        Self {
            number,
            pages,
            items: start..total.min(start + size),
        }
    }

    /// The page holding item `index`.
    pub fn holding(total: usize, size: usize, index: usize) -> Self {
        Self::of(total, size, index / size.max(1) + 1)
    }

    /// A `?page=` as a page number; anything but a positive integer is the first page.
    pub fn parse_number(raw: &str) -> usize {
        raw.parse::<usize>().ok().filter(|&p| p >= 1).unwrap_or(1)
    }
}

#[cfg(test)]
mod tests {
    use super::Page;

    fn page(total: usize, size: usize, asked: usize) -> (usize, usize, std::ops::Range<usize>) {
        let p = Page::of(total, size, asked);
        (p.number, p.pages, p.items)
    }

    #[test]
    fn a_page_number_is_a_positive_integer_else_the_first_page() {
        assert_eq!(Page::parse_number("3"), 3);
        assert_eq!(Page::parse_number("0"), 1);
        assert_eq!(Page::parse_number("-2"), 1);
        assert_eq!(Page::parse_number("two"), 1);
        assert_eq!(Page::parse_number(""), 1);
        assert_eq!(Page::parse_number("99999999999999999999999"), 1);
    }

    #[test]
    fn pages_split_the_items_and_past_the_last_is_the_last() {
        assert_eq!(page(50, 24, 1), (1, 3, 0..24));
        assert_eq!(page(50, 24, 2), (2, 3, 24..48));
        assert_eq!(page(50, 24, 3), (3, 3, 48..50));
        assert_eq!(page(50, 24, 9), (3, 3, 48..50));
        assert_eq!(page(50, 24, usize::MAX), (3, 3, 48..50));
        assert_eq!(page(48, 24, 2), (2, 2, 24..48));
        assert_eq!(page(24, 24, 1), (1, 1, 0..24));
        assert_eq!(page(1, 24, 1), (1, 1, 0..1));
        assert_eq!(page(0, 24, 1), (1, 1, 0..0));
    }

    #[test]
    fn the_page_holding_an_item() {
        assert_eq!(Page::holding(50, 24, 0).number, 1);
        assert_eq!(Page::holding(50, 24, 23).number, 1);
        assert_eq!(Page::holding(50, 24, 24).number, 2);
        assert_eq!(Page::holding(50, 24, 49).number, 3);
    }
}
