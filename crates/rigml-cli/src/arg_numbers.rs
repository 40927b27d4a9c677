//! Value parsers for floating-point flags. clap's `value_parser!(..).range(..)` covers integers
//! only, so a float flag without one of these takes NaN, infinities and values outside its
//! meaning (a negative pull, a zero cutoff) and fails late, or worse, runs. These refuse them
//! where the command line is read: clap then names the flag and exits with status 2 before any
//! work.

use std::str::FromStr;

/// A float type a flag can hold (f32 or f64).
pub trait Float: FromStr + Copy + Into<f64> + Send + Sync + 'static {}
impl Float for f32 {}
impl Float for f64 {}

fn finite<T: Float>(s: &str) -> Result<T, String> {
    let v: T = s.trim().parse().map_err(|_| format!("`{s}` is not a number"))?;
    if v.into().is_finite() {
        Ok(v)
    } else {
        Err(format!("`{s}` is not a finite number"))
    }
}

/// A finite number above zero (rates, cutoffs, frame rates, step limits).
pub fn positive<T: Float>(s: &str) -> Result<T, String> {
    let v = finite::<T>(s)?;
    if v.into() > 0.0 {
        Ok(v)
    } else {
        Err(format!("{s}: must be above 0"))
    }
}

/// A finite number at or above zero (weights of penalty terms, pulls, coefficients).
pub fn non_negative<T: Float>(s: &str) -> Result<T, String> {
    let v = finite::<T>(s)?;
    if v.into() >= 0.0 {
        Ok(v)
    } else {
        Err(format!("{s}: must be 0 or more"))
    }
}

/// A share or a probability: a number from 0 to 1.
pub fn unit_interval<T: Float>(s: &str) -> Result<T, String> {
    let v = finite::<T>(s)?;
    if (0.0..=1.0).contains(&v.into()) {
        Ok(v)
    } else {
        Err(format!("{s}: must lie between 0 and 1"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positive_refuses_zero_negative_and_non_finite() {
        assert_eq!(positive::<f64>("2.5"), Ok(2.5));
        assert_eq!(positive::<f32>("1e-4"), Ok(1e-4));
        for bad in ["0", "-1", "nan", "NaN", "inf", "-inf", "", "two"] {
            assert!(positive::<f64>(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn non_negative_takes_zero_and_refuses_the_rest() {
        assert_eq!(non_negative::<f64>("0"), Ok(0.0));
        assert_eq!(non_negative::<f32>("3"), Ok(3.0));
        for bad in ["-1e-9", "nan", "inf"] {
            assert!(non_negative::<f64>(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn unit_interval_is_closed() {
        assert_eq!(unit_interval::<f32>("0"), Ok(0.0));
        assert_eq!(unit_interval::<f32>("1"), Ok(1.0));
        for bad in ["1.01", "-0.1", "nan"] {
            assert!(unit_interval::<f64>(bad).is_err(), "{bad} accepted");
        }
    }
}
