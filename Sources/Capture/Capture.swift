import HAL
