//! Distances between point sets (joint positions, bone samples): the chamfer distance that the
//! skeleton metrics report and that the rig library's vote ranks rigs by, defined once.

use glam::Vec3;

/// `mean_{a∈A} min_{b∈B} |a-b|`, accumulated in f64; `None` when either set is empty.
/// Quadratic in the set sizes: meant for joint sets and bone samples (hundreds of points).
pub fn directed_distance(a: &[Vec3], b: &[Vec3]) -> Option<f64> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let sum: f64 = a
        .iter()
        .map(|x| {
            b.iter()
                .map(|y| f64::from(x.distance(*y)))
                .fold(f64::INFINITY, f64::min)
        })
        .sum();
    Some(sum / a.len() as f64)
}

/// The chamfer distance `0.5·(directed(A,B) + directed(B,A))`; `None` when either set is empty.
pub fn chamfer(a: &[Vec3], b: &[Vec3]) -> Option<f64> {
    Some(0.5 * (directed_distance(a, b)? + directed_distance(b, a)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chamfer_distance_is_nought_for_one_set_grows_for_an_odd_one_and_needs_points() {
        let a = [Vec3::ZERO, Vec3::Y];
        let b = [Vec3::ZERO, Vec3::new(0.0, 1.1, 0.0)];
        let odd = [Vec3::ZERO, Vec3::new(3.0, 0.0, 0.0)];
        assert!(chamfer(&a, &b).unwrap() < chamfer(&a, &odd).unwrap());
        assert_eq!(chamfer(&a, &a), Some(0.0));
        // One point 0.1 off: each direction averages 0.1 over two points -> 0.05.
        assert!((chamfer(&a, &b).unwrap() - 0.05).abs() < 1e-6);
        assert_eq!(directed_distance(&[Vec3::ZERO], &[Vec3::X, Vec3::Y * 2.0]), Some(1.0));
        assert_eq!(chamfer(&a, &[]), None);
        assert_eq!(directed_distance(&[], &a), None);
    }
}
